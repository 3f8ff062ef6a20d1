package odata

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/secret"
)

// MetadataContentType is the Content-Type of the [Metadata] document. OData
// 4.0 defines only the XML representation of CSDL, so $metadata is XML
// whatever the Accept header says.
const MetadataContentType = "application/xml;charset=utf-8"

// ParseMetadata checks the query options of a request for $metadata:
// $format alone, xml or application/xml, which changes nothing. $format=json
// (OData 4.01's CSDL JSON, a document informe does not write) or any other
// format is a 406; any other $-option a 400 naming it, as on the other
// paths. The Accept header is not read: the document is XML whatever it
// says, as OData 4.0 defines no other. Options that do not start with '$'
// are the caller's. Errors are *failure.Error values with the option as
// Target.
func ParseMetadata(values url.Values) error {
	opts, err := systemOptions(values)
	if err != nil {
		return err
	}
	for _, name := range sortedKeys(opts) {
		if name != "$format" {
			return badRequest(name, reasonUnknownOption, name+" is not an option of $metadata, which takes $format=xml only")
		}
		raw := opts[name]
		mt, _, ok := parseMediaType(raw)
		if strings.EqualFold(raw, "xml") || ok && mt == "application/xml" {
			continue
		}
		msg := "$format " + secret.Quote(raw) + " is not supported: $metadata is CSDL XML (application/xml)"
		if strings.EqualFold(raw, "json") || ok && mt == "application/json" {
			msg += "; CSDL JSON (OData 4.01) is not written"
		}
		return notAcceptable(name, msg)
	}
	return nil
}

// Version is the OData-Version every OData response carries, exactly once
// (Power Query rejects a doubled header).
const Version = "4.0"

// Metadata returns the CSDL XML document (OData 4.0) describing sets: one
// schema in [Namespace] with an entity type per set and one entity
// container, [Container], holding the sets. Property types follow the
// column kinds (see [dataset.EntitySet.Columns]); Edm.Decimal properties have
// Scale="variable" (the scale defaults to 0 otherwise) and Timestamptz
// properties Precision="6", for their microseconds (the precision of an
// Edm.DateTimeOffset defaults to 0, whole seconds). Each entity set carries
// Org.OData.Capabilities.V1 annotations saying what it supports: the
// $filter functions, filtering and sorting on any property, $count, $top
// and $skip, $expand one level where the set has navigation properties,
// and no $search. Navigation properties ([dataset.EntitySet.Navigations]) whose
// targets are among sets are declared with their partners, the to-one ones
// with a ReferentialConstraint, and bound to their target sets in the
// container. The schema declares $filter's own function, Informe.fold,
// and informe's own terms: Informe.Personal annotates a property holding
// personal data with whose (client, payer, user), Informe.Masked one that
// the token sees masked with its mask (see dataset.Mask).
// The document is the same on every call: build it once.
func Metadata(sets ...*EntitySet) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n" +
		`<edmx:Edmx Version="4.0" xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx">` + "\n" +
		`<edmx:Reference Uri="https://oasis-tcs.github.io/odata-vocabularies/vocabularies/Org.OData.Capabilities.V1.xml">` + "\n" +
		`<edmx:Include Namespace="Org.OData.Capabilities.V1" Alias="Capabilities"/>` + "\n" +
		`</edmx:Reference>` + "\n" +
		`<edmx:DataServices>` + "\n" +
		`<Schema Namespace="` + Namespace + `" xmlns="http://docs.oasis-open.org/odata/ns/edm">` + "\n")
	// Names are checked OData identifiers (ASCII letters, digits and
	// underscores): nothing needs escaping.
	for _, s := range sets {
		b.WriteString(`<EntityType Name="` + s.def.TypeName + `">` + "\n")
		b.WriteString(`<Key><PropertyRef Name="` + s.def.Key + `"/></Key>` + "\n")
		for _, p := range s.props {
			b.WriteString(`<Property Name="` + p.name + `" Type="` + EDMType(p.kind) + `"`)
			if p.nullable {
				b.WriteString(` Nullable="true"`)
			} else {
				b.WriteString(` Nullable="false"`)
			}
			switch p.kind {
			case dataset.Decimal:
				b.WriteString(` Scale="variable"`)
			case dataset.Timestamptz:
				b.WriteString(` Precision="6"`)
			}
			if p.personal == dataset.NotPersonal {
				b.WriteString("/>\n")
				continue
			}
			// Whose personal data it holds, and, for a token that sees
			// it masked, how: informe's own terms, declared below.
			b.WriteString(">" + `<Annotation Term="` + Namespace + `.Personal" String="` + p.personal.String() + `"/>`)
			if p.mask != dataset.Unmasked {
				b.WriteString(`<Annotation Term="` + Namespace + `.Masked" String="` + p.mask.String() + `"/>`)
			}
			b.WriteString("</Property>\n")
		}
		for _, n := range navigations(s, sets) {
			t := target(n)
			typ := Namespace + "." + t.def.TypeName
			if n.Many {
				b.WriteString(`<NavigationProperty Name="` + n.Name + `" Type="Collection(` + typ + `)" Partner="` + n.Partner + `"/>` + "\n")
				continue
			}
			b.WriteString(`<NavigationProperty Name="` + n.Name + `" Type="` + typ + `" Nullable="` + strconv.FormatBool(n.Optional) +
				`" Partner="` + n.Partner + `">` + "\n")
			b.WriteString(`<ReferentialConstraint Property="` + n.Property + `" ReferencedProperty="` + t.def.Key + `"/>` + "\n")
			b.WriteString("</NavigationProperty>\n")
		}
		b.WriteString("</EntityType>\n")
	}
	// $filter's own function: unbound, called by its qualified name with
	// its parameter named, Informe.fold(text=client_commune).
	b.WriteString(`<Function Name="` + strings.TrimPrefix(foldFunction, Namespace+".") + `">` +
		`<Parameter Name="` + foldParameter + `" Type="Edm.String"/><ReturnType Type="Edm.String"/></Function>` + "\n")
	// informe's own annotations of properties: whose personal data one
	// holds (client, payer, user), and how a masked one is written (rut,
	// email, phone, name, withheld, other).
	b.WriteString(`<Term Name="Personal" Type="Edm.String" AppliesTo="Property"/>` + "\n" +
		`<Term Name="Masked" Type="Edm.String" AppliesTo="Property"/>` + "\n")
	b.WriteString(`<EntityContainer Name="` + Container + `">` + "\n")
	for _, s := range sets {
		b.WriteString(`<EntitySet Name="` + s.def.Name + `" EntityType="` + Namespace + "." + s.def.TypeName + `">` + "\n")
		navs := navigations(s, sets)
		for _, n := range navs {
			b.WriteString(`<NavigationPropertyBinding Path="` + n.Name + `" Target="` + n.Target + `"/>` + "\n")
		}
		b.WriteString(capabilities)
		if len(navs) > 0 {
			b.WriteString(expandable)
		} else {
			b.WriteString(notExpandable)
		}
		b.WriteString("</EntitySet>\n")
	}
	b.WriteString("</EntityContainer>\n</Schema>\n</edmx:DataServices>\n</edmx:Edmx>\n")
	return []byte(b.String())
}

// capabilities are the Org.OData.Capabilities.V1 annotations of every
// entity set: what $filter, $orderby, $count, $top and $skip support, for
// clients (Power Query among them) that read them to decide what to fold.
var capabilities = func() string {
	var b strings.Builder
	b.WriteString(`<Annotation Term="Capabilities.FilterFunctions"><Collection>`)
	for _, f := range strings.Split(supportedFunctions, ", ") {
		b.WriteString("<String>" + f + "</String>")
	}
	b.WriteString("</Collection></Annotation>\n")
	b.WriteString(`<Annotation Term="Capabilities.FilterRestrictions"><Record>` +
		`<PropertyValue Property="Filterable" Bool="true"/>` +
		`<PropertyValue Property="RequiresFilter" Bool="false"/>` +
		"</Record></Annotation>\n")
	b.WriteString(`<Annotation Term="Capabilities.SortRestrictions"><Record>` +
		`<PropertyValue Property="Sortable" Bool="true"/>` +
		"</Record></Annotation>\n")
	b.WriteString(`<Annotation Term="Capabilities.CountRestrictions"><Record>` +
		`<PropertyValue Property="Countable" Bool="true"/>` +
		"</Record></Annotation>\n")
	b.WriteString(`<Annotation Term="Capabilities.TopSupported" Bool="true"/>` + "\n")
	b.WriteString(`<Annotation Term="Capabilities.SkipSupported" Bool="true"/>` + "\n")
	b.WriteString(`<Annotation Term="Capabilities.SearchRestrictions"><Record>` +
		`<PropertyValue Property="Searchable" Bool="false"/>` +
		"</Record></Annotation>\n")
	return b.String()
}()

// expandable and notExpandable are the ExpandRestrictions of a set with
// navigation properties ($expand, one level) and of one without.
const (
	expandable = `<Annotation Term="Capabilities.ExpandRestrictions"><Record>` +
		`<PropertyValue Property="Expandable" Bool="true"/>` +
		`<PropertyValue Property="MaxLevels" Int="1"/>` +
		"</Record></Annotation>\n"
	notExpandable = `<Annotation Term="Capabilities.ExpandRestrictions"><Record>` +
		`<PropertyValue Property="Expandable" Bool="false"/>` +
		"</Record></Annotation>\n"
)

// navigations returns s's navigations whose targets are among sets: those
// the document declares.
func navigations(s *EntitySet, sets []*EntitySet) []*dataset.Navigation {
	var out []*dataset.Navigation
	for i := range s.def.Navigations {
		n := &s.def.Navigations[i]
		if t := target(n); t != nil && slices.ContainsFunc(sets, func(s *EntitySet) bool { return s.def.Name == n.Target }) {
			out = append(out, n)
		}
	}
	return out
}

// ServiceDocument returns the JSON service document listing sets, served at
// the service root:
//
//	{"@odata.context":"<root>/$metadata","value":[{"name":"GeneralReport","kind":"EntitySet","url":"GeneralReport"},...]}
//
// root is the absolute URL of the service root without a trailing slash,
// e.g. "https://informe.example.cl/odata". Send it with the Content-Type of
// the [Format] [Negotiate] chose.
func ServiceDocument(root string, sets ...*EntitySet) []byte {
	b := append([]byte(nil), `{"@odata.context":`...)
	b = export.AppendJSONString(b, []byte(root+"/$metadata"))
	b = append(b, `,"value":[`...)
	for i, s := range sets {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":"`+s.def.Name+`","kind":"EntitySet","url":"`+s.def.Name+`"}`...)
	}
	return append(b, "]}"...)
}
