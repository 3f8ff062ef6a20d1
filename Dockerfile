# Builds the informe binary into a small image. Run `informe migrate` once
# (and on upgrades), then `informe serve`; see docker-compose.yml.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /informe ./cmd/informe

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /informe /informe
EXPOSE 8080 9090
ENTRYPOINT ["/informe"]
CMD ["serve"]
