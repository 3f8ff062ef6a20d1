# Sourced by scripts/scale-check --throughput, after the primary, the
# standby and PgBouncer are up: the throughput of concurrent whole CSV
# exports with one and with two informe instances on the standby, directly
# and through PgBouncer, next to what the capacity model predicts.

# cpu_ns PID...: the CPU nanoseconds so far of these processes, every thread
# (/proc/PID/task/*/schedstat, as scripts/bench reads them).
cpu_ns() {
	local ns=0 p t n rest
	for p in "$@"; do
		for t in /proc/"$p"/task/*/schedstat; do
			read -r n rest <"$t" 2>/dev/null && ns=$((ns + n))
		done
	done
	echo "$ns"
}
# backends: "pid ns" for each of informe's backends on the standby, those
# PgBouncer opened included (they log in as informe too).
backends() {
	local pid
	for pid in $(sql "$standby_port" informe -c "SELECT pid FROM pg_stat_activity WHERE usename = 'informe' AND backend_type = 'client backend'"); do
		echo "$pid $(cpu_ns "$pid")"
	done
}
# backends_s BEFORE AFTER: CPU seconds the backends of AFTER spent since BEFORE.
backends_s() {
	awk 'NR == FNR { b[$1] = $2; next } NF == 2 { s += $2 - b[$1] } END { printf "%.3f", s / 1e9 }' <(echo "$1") <(echo "$2")
}
machine_s() { awk '$1 == "cpu" { printf "%.2f", ($2 + $3 + $4 + $7 + $8 + $9) / 100; exit }' /proc/stat; }
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }

rows=$(sql "$standby_port" informe -c "SELECT report_rows_total()")
cores=$(nproc)
export_path="/api/general-report/export?format=csv"
max_time=1800 # whole exports, several at once
step "throughput: $tp_clients clients at once, each doing $tp_exports whole CSV exports ($rows rows each), on one and on two instances"

start tp-a "$standby_url"
start tp-b "$standby_url"
start tpb-a "$bouncer_url"
start tpb-b "$bouncer_url"
for name in tp-a tp-b tpb-a tpb-b; do
	ready "$name" || die "informe $name is not ready; see $tmp/logs/informe-$name.log"
done

# Warm-up: one export from each instance, which also gives the bytes every
# export must have; then one alone on tp-a, timed.
ref_bytes=
for name in tp-a tp-b tpb-a tpb-b; do
	s=$(get "$name" "$export_path" "$tmp/http/tp-warm-$name") || die "warm-up export from $name failed"
	[ "$s" = 200 ] || die "warm-up export from $name answered $s: $(head -c 300 "$tmp/http/tp-warm-$name.body")"
	b=$(wc -c <"$tmp/http/tp-warm-$name.body")
	[ -z "$ref_bytes" ] || [ "$b" = "$ref_bytes" ] || die "$name's export has $b bytes, tp-a's $ref_bytes"
	ref_bytes=$b
done
t0=$(now)
get tp-a "$export_path" "$tmp/http/tp-alone" >/dev/null || die "the export alone failed"
alone_rps=$(calc %.0f "$rows / ($(now) - $t0)")
rm -f "$tmp"/http/tp-*.body

# run_load NAME...: the clients, spread over the instances in turn; sets
# load to "rows/s informe_s pg_s bouncer_s machine_s wall_s".
run_load() {
	local inst=("$@") ipids=() pids=() c n before after m0 t0 i0 b0 wall bad bouncer
	for n in "${inst[@]}"; do ipids+=("${inst_pid[$n]}"); done
	bouncer=$(cat "$tmp/pg/bouncer/pgbouncer.pid")
	rm -f "$tmp"/http/tp-client-*
	before=$(backends) m0=$(machine_s) t0=$(now) i0=$(cpu_ns "${ipids[@]}") b0=$(cpu_ns "$bouncer")
	for c in $(seq "$tp_clients"); do
		n=${inst[$(((c - 1) % ${#inst[@]}))]}
		(
			for _ in $(seq "$tp_exports"); do
				curl -sS --max-time "$max_time" -o /dev/null -w '%{http_code} %{size_download}\n' \
					-H "Authorization: Bearer $token" "http://127.0.0.1:${api_port[$n]}$export_path" || echo "curl-failed 0"
			done >"$tmp/http/tp-client-$c"
		) &
		pids+=($!)
	done
	wait "${pids[@]}"
	wall=$(calc %.3f "$(now) - $t0")
	after=$(backends)
	bad=$(cat "$tmp"/http/tp-client-* | awk -v b="$ref_bytes" '$1 != 200 || $2 != b' | wc -l)
	if [ "$bad" -eq 0 ]; then
		pass "throughput on ${inst[*]}: all $((tp_clients * tp_exports)) exports answered 200 with all their bytes"
	else
		fail "throughput on ${inst[*]}: every export answered 200 with all its bytes" "$bad of $((tp_clients * tp_exports)) did not"
	fi
	local rps ic pc bc mc
	rps=$(calc %.0f "$tp_clients * $tp_exports * $rows / $wall")
	ic=$(calc %.3f "($(cpu_ns "${ipids[@]}") - $i0) / 1e9")
	pc=$(backends_s "$before" "$after")
	bc=$(calc %.3f "($(cpu_ns "$bouncer") - $b0) / 1e9")
	mc=$(calc %.2f "$(machine_s) - $m0")
	load="$rps $ic $pc $bc $mc $wall"
}

# The model: rows a second per core, both sides counted, from the model's
# file, or else from the first run (one instance, directly).
model_value() { sed -n "s/^$1=//p" "$model" | head -1; }
per_core= model_note=
if [ -n "$model" ]; then
	per_core=$(model_value csv_rows_per_core_s)
	[[ "$per_core" =~ ^[0-9.]+$ ]] || die "$model has no csv_rows_per_core_s"
	model_note="the model: $(head -1 "$model" | sed 's/^# *//'); CSV $(model_value csv_informe_us_per_row) + $(model_value csv_pg_us_per_row) µs a row (informe + PostgreSQL), $per_core rows/s per core"
fi

rows_total=$((tp_clients * tp_exports * rows))
lines=()
for setup in "directly:tp-a" "directly:tp-a tp-b" "PgBouncer:tpb-a" "PgBouncer:tpb-a tpb-b"; do
	via=${setup%%:*}
	read -ra inst <<<"${setup#*:}"
	echo "$via, ${#inst[@]} instance(s): $tp_clients clients x $tp_exports exports"
	run_load "${inst[@]}"
	read -r rps ic pc bc mc wall <<<"$load"
	if [ -z "$per_core" ]; then
		per_core=$(calc %.0f "$rows_total / ($ic + $pc)")
		model_note="the model: this table's first run (one instance, directly): $(calc %.2f "1e6 * $ic / $rows_total") + $(calc %.2f "1e6 * $pc / $rows_total") µs a row (informe + PostgreSQL), $per_core rows/s per core"
	fi
	# The lesser of the clients' exports each at the speed of one alone,
	# and the machine's cores at the model's rows per second per core.
	predicted=$(calc %.0f "($tp_clients * $alone_rps < $cores * $per_core) ? $tp_clients * $alone_rps : $cores * $per_core")
	ours=$(calc %.2f "$ic + $pc + $bc")
	# The same on the cores other work left: the cores less others' busy ones.
	left=$(calc %.0f "($tp_clients * $alone_rps < ($cores - ($mc - $ours) / $wall) * $per_core) ? $tp_clients * $alone_rps : ($cores - ($mc - $ours) / $wall) * $per_core")
	lines+=("| $via | ${#inst[@]} | $rps | $predicted | $(calc %.2f "$rps / $predicted") | $left | $(calc %.2f "$rps / $left") | $(calc %.2f "1e6 * $ic / $rows_total") | $(calc %.2f "1e6 * $pc / $rows_total") | $(calc %.2f "1e6 * $bc / $rows_total") | $(calc %.2f "$ours / $wall") | $(calc %.2f "($mc - $ours) / $wall") | $(calc %.0f "100 * $mc / ($cores * $wall)")% |")
	info "throughput $via with ${#inst[@]} instance(s): $rps rows/s, predicted $predicted"
done

echo
echo "## One and two informe instances on a hot standby"
echo
echo "- $(date -u '+%Y-%m-%d %H:%M UTC'), $cores cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $rows report rows (--contracts $contracts); informe: $built_from"
echo "- $tp_clients clients at once, each doing $tp_exports whole CSV exports ($ref_bytes bytes each; every one checked: 200 and all its bytes), spread over the instances in turn; informe's default flags; PgBouncer in transaction pooling, default_pool_size = 20, informe with default_query_exec_mode=exec"
echo "- one export alone (tp-a, directly): $alone_rps rows/s; $model_note"
echo "- predicted: the lesser of $tp_clients exports at once each at the speed of one alone, and $cores cores at the model's rows/s per core; on the cores left: the same with the cores less those other work kept busy meanwhile; CPU columns are µs per exported row (/proc schedstat): informe's processes, its backends on the standby, PgBouncer; cores busy: ours (all three) and others' (the machine's /proc/stat less ours: the curl clients, the standby's other processes, other work)"
echo
echo "| via | instances | rows/s | predicted rows/s | x predicted | predicted on the cores left | x that | informe µs/row | PostgreSQL µs/row | PgBouncer µs/row | our cores busy | others' cores busy | machine busy |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${lines[@]}"
