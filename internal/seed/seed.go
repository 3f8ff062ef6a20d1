// Package seed loads realistic, deterministic demo data into an empty
// database ([Seed]): contracts, clients, services, processes, tasks and
// users, the same rows for the same [Options].
package seed

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/rut"
)

// Options configures [Seed].
type Options struct {
	// Contracts is how many contracts to make; at least 1. The rest scales
	// with it: about one client per 1.5 contracts, 1.9 processes and 10
	// report rows per contract, and max(50, Contracts/100) users.
	Contracts int
	// Seed picks the data: the same Contracts and Seed give the same rows,
	// byte for byte.
	Seed int64
}

// Stats counts what [Seed] loaded.
type Stats struct {
	BenefitCenters int64
	Services       int64
	Clients        int64
	Contracts      int64
	Processes      int64
	Tasks          int64
	Users          int64
	// ReportRows is the number of rows of the general_report view, as the
	// trigger-kept counters count them.
	ReportRows int64
}

// ErrNotEmpty is returned by [Seed] when the database already holds data.
var ErrNotEmpty = errors.New("seed: the database already holds data; seed loads only an empty database")

// seededTables are the tables Seed writes, in foreign-key order.
var seededTables = []string{"benefit_centers", "services", "clients", "contracts", "processes", "tasks", "users"}

// HasData reports whether any table that [Seed] writes (clients, contracts,
// processes, tasks, services, benefit_centers, users) has a row.
func HasData(ctx context.Context, pool *pgxpool.Pool) (bool, error) {
	return hasData(ctx, pool)
}

func hasData(ctx context.Context, q postgres.Querier) (bool, error) {
	has, err := postgres.AnyRows(ctx, q, seededTables)
	if err != nil {
		return false, fmt.Errorf("seed: %w", err)
	}
	return has, nil
}

// Seed fills an empty database with realistic, made-up Chilean legal-services
// data: benefit centers, services, clients, contracts, processes, tasks and
// users. Ids are assigned here and every date derives from fixed calendar
// dates, never the clock, so the same options give the same rows. The rows
// are generated as they are sent, with COPY, in one transaction; the
// report-count triggers run on each COPY, and their total is checked
// against the number of report rows the seed made. The tables are analyzed
// afterwards.
//
// It returns [ErrNotEmpty] if [HasData] would report true, an error if
// opts.Contracts is below 1, and database errors wrapped with a "seed:"
// prefix; on error nothing is loaded.
func Seed(ctx context.Context, pool *pgxpool.Pool, opts Options) (Stats, error) {
	if opts.Contracts < 1 {
		return Stats{}, fmt.Errorf("seed: Contracts must be at least 1, got %d", opts.Contracts)
	}
	g := newSeeder(opts)
	var st Stats
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// Self-conflicting locks: a second Seed waits here, then sees the
		// first one's rows and refuses.
		if err := postgres.LockTables(ctx, tx, seededTables); err != nil {
			return err
		}
		has, err := hasData(ctx, tx)
		if err != nil {
			return err
		}
		if has {
			return ErrNotEmpty
		}
		// The report-count triggers and the foreign-key checks run on
		// COPY too; a bigger work_mem keeps their hash joins in memory.
		if err := postgres.SetLocalWorkMem(ctx, tx); err != nil {
			return err
		}
		steps := []struct {
			table string
			cols  []string
			src   pgx.CopyFromSource
			count *int64
		}{
			{"benefit_centers", []string{"id", "name"}, g.benefitCenters(), &st.BenefitCenters},
			{"services", []string{"id", "name", "cost", "benefit_center_id"}, g.services(), &st.Services},
			{"clients", clientColumns, g.clients(), &st.Clients},
			{"contracts", contractColumns, g.contracts(), &st.Contracts},
			{"processes", processColumns, g.processes(), &st.Processes},
			{"tasks", taskColumns, g.tasks(), &st.Tasks},
			{"users", userColumns, g.users(), &st.Users},
		}
		for _, s := range steps {
			n, err := tx.CopyFrom(ctx, pgx.Identifier{s.table}, s.cols, s.src)
			if err != nil {
				return fmt.Errorf("copy %s: %w", s.table, err)
			}
			*s.count = n
			// Ids were given explicitly, so move each identity past them
			// for rows inserted later without one.
			if err := postgres.ResetIdentity(ctx, tx, s.table); err != nil {
				return fmt.Errorf("setval %s: %w", s.table, err)
			}
		}
		// The trigger-kept counters hold the report's size; the rule for
		// how many rows a contract yields lives only in SQL.
		st.ReportRows, err = postgres.ReportRowsTotal(ctx, tx)
		return err
	})
	if errors.Is(err, ErrNotEmpty) {
		return Stats{}, ErrNotEmpty
	}
	if err != nil {
		return Stats{}, fmt.Errorf("seed: %w", err)
	}
	if err := postgres.Analyze(ctx, pool, append(seededTables, "report_contract_rows", "report_bucket_rows")); err != nil {
		return st, fmt.Errorf("seed: analyze: %w", err)
	}
	return st, nil
}

// The seed's calendar: contracts are made between contractsFrom and
// contractsTo, in id order; users join from usersFrom.
var (
	contractsFrom = time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)
	contractsTo   = time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC)
	usersFrom     = time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)
	birthsFrom    = time.Date(1945, 1, 1, 0, 0, 0, 0, time.UTC)
)

const day = 24 * time.Hour

// Stream keys: each kind of row draws from its own random stream, reseeded
// per row id, so a table can be generated again (processes and tasks are
// regenerated from their contract) without generating the others.
const (
	keyAssign uint64 = 0x9e3779b97f4a7c15 + iota
	keyClient
	keyContract
	keyPlan
	keyTask
	keyUser
	keyCreated
	keySurname
	keyRUT
)

// seeder generates the rows. Memory is small and linear: a client id per
// contract, a first contract per client, and the users' names.
type seeder struct {
	seed          uint64
	n             int
	clientOf      []int32 // by contract id - 1
	firstContract []int32 // by client id - 1
	staff         []string
	rutOffset     int

	client, contract, plan, task, user *stream

	planBuf []plannedProcess
}

func newSeeder(opts Options) *seeder {
	seed := uint64(opts.Seed)
	g := &seeder{
		seed:     seed,
		n:        opts.Contracts,
		client:   newStream(seed, keyClient),
		contract: newStream(seed, keyContract),
		plan:     newStream(seed, keyPlan),
		task:     newStream(seed, keyTask),
		user:     newStream(seed, keyUser),
	}
	g.rutOffset = int(mix64(seed^keyRUT) % rutSpan)

	// About two in three contracts bring a new client; the others belong
	// to a client already seen, so clients are created in the order of
	// their first contract.
	r := rand.New(rand.NewPCG(seed, keyAssign))
	g.clientOf = make([]int32, g.n)
	g.firstContract = make([]int32, 0, g.n*2/3+16)
	for c := 1; c <= g.n; c++ {
		if c == 1 || r.IntN(3) < 2 {
			g.firstContract = append(g.firstContract, int32(c))
			g.clientOf[c-1] = int32(len(g.firstContract))
		} else {
			g.clientOf[c-1] = int32(1 + r.IntN(len(g.firstContract)))
		}
	}
	g.staff = make([]string, g.userCount())
	for i := range g.staff {
		g.staff[i] = g.userName(i + 1)
	}
	return g
}

func (g *seeder) userCount() int { return max(50, g.n/100) }

// stream is a random stream reseeded for each row it generates.
type stream struct {
	pcg  rand.PCG
	r    *rand.Rand
	hi   uint64
	key  uint64
	seed uint64
}

func newStream(seed, key uint64) *stream {
	s := &stream{hi: mix64(seed ^ key), key: key, seed: seed}
	s.r = rand.New(&s.pcg)
	return s
}

// at returns the stream's generator positioned for row id.
func (s *stream) at(id int) *rand.Rand {
	s.pcg.Seed(s.hi, mix64(uint64(id)*0xbf58476d1ce4e5b9^s.key))
	return s.r
}

// mix64 is SplitMix64's finalizer: nearby inputs give unrelated outputs.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// hashOf is a pure function of the seed, a key and an id, for values that
// several tables need without regenerating a whole row.
func (g *seeder) hashOf(key uint64, id int) uint64 {
	return mix64(g.seed ^ mix64(key^uint64(id)*0x94d049bb133111eb))
}

// contractCreated is when contract c was made: contracts spread evenly
// over the seed's calendar in id order, during office hours.
func (g *seeder) contractCreated(c int) time.Time {
	days := int64(contractsTo.Sub(contractsFrom) / day)
	d := int64(c-1) * days / int64(g.n)
	secs := int64(g.hashOf(keyCreated, c) % (11 * 3600))
	return contractsFrom.Add(time.Duration(d)*day + 8*time.Hour + 30*time.Minute + time.Duration(secs)*time.Second)
}

// clientSurname is client id's first surname, which captions also use.
func (g *seeder) clientSurname(id int) string {
	return surnames[g.hashOf(keySurname, id)%uint64(len(surnames))]
}

// RUT bodies of clients and users come from a permutation of
// [rutMin, rutMin+rutSpan), so they never repeat: clients count up from
// its start, users down from its end.
const (
	rutMin    = 5_000_000
	rutSpan   = 20_000_000
	rutStride = 7_919_993 // coprime with rutSpan
)

func (g *seeder) rutBody(index int) int {
	return rutMin + int((uint64(index)*rutStride+uint64(g.rutOffset))%rutSpan)
}

// person is a client or payer as the tables hold them; "" and the zero
// time are NULL.
type person struct {
	rut, passport, first, second, last, secondLast string
	birth                                          time.Time
	occupation, email, phone, country, marital     string
	gender, region, commune, address               string
}

func (g *seeder) newPerson(r *rand.Rand, body int, last string) person {
	var p person
	female := r.IntN(2) == 0
	names := maleNames
	p.gender = "Masculino"
	if female {
		names = femaleNames
		p.gender = "Femenino"
	}
	p.first = pick(r, names)
	if r.IntN(100) < 85 {
		for p.second = pick(r, names); p.second == p.first; p.second = pick(r, names) {
		}
	}
	p.last = last
	if p.last == "" {
		p.last = pick(r, surnames)
	}
	if r.IntN(100) < 95 {
		p.secondLast = pick(r, surnames)
	}
	p.rut = rut.New(body).String()
	p.country = "Chile"
	if r.IntN(100) < 10 {
		fc := foreignCountries[r.IntN(len(foreignCountries))]
		p.country = fc.name
		if r.IntN(100) < 80 {
			p.passport = fmt.Sprintf("%s%07d", fc.prefix, r.IntN(10_000_000))
		}
	}
	if r.IntN(100) < 97 {
		p.birth = birthsFrom.Add(time.Duration(r.IntN(60*365)) * day)
	}
	if r.IntN(100) < 92 {
		occ := pick(r, occupations)
		p.occupation = occ[0]
		if female {
			p.occupation = occ[1]
		}
	}
	if r.IntN(100) < 94 {
		p.email = g.email(r, p)
	}
	if r.IntN(100) < 97 {
		p.phone = phone(r)
	}
	ms := weighted(r, maritalStatuses, maritalStatus.w)
	p.marital = ms.male
	if female {
		p.marital = ms.female
	}
	p.region, p.commune = place(r)
	if r.IntN(100) < 98 {
		p.address = address(r)
	}
	return p
}

func (g *seeder) email(r *rand.Rand, p person) string {
	var b strings.Builder
	b.WriteString(fold(p.first))
	b.WriteString([]string{".", "", "_", "."}[r.IntN(4)])
	b.WriteString(fold(p.last))
	if r.IntN(100) < 40 {
		fmt.Fprintf(&b, "%d", 1+r.IntN(99))
	}
	b.WriteByte('@')
	b.WriteString(pick(r, emailDomains))
	return b.String()
}

func phone(r *rand.Rand) string {
	if r.IntN(100) < 6 {
		return fmt.Sprintf("+56 2 2%03d %04d", r.IntN(1000), r.IntN(10000))
	}
	return fmt.Sprintf("+56 9 %04d %04d", r.IntN(10000), r.IntN(10000))
}

func place(r *rand.Rand) (regionName, commune string) {
	reg := weighted(r, regions, region.w)
	return reg.name, pick(r, reg.communes)
}

func address(r *rand.Rand) string {
	s := fmt.Sprintf("%s %d", pick(r, streets), 1+r.IntN(9999))
	switch r.IntN(10) {
	case 0, 1, 2:
		s += fmt.Sprintf(", depto. %d", 100*(1+r.IntN(25))+1+r.IntN(12))
	case 3:
		s += fmt.Sprintf(", casa %c", 'A'+r.IntN(8))
	}
	return s
}

// fold lower-cases s and drops accents and everything but letters and
// digits, for e-mail addresses.
func fold(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		switch c {
		case 'á':
			c = 'a'
		case 'é':
			c = 'e'
		case 'í':
			c = 'i'
		case 'ó':
			c = 'o'
		case 'ú', 'ü':
			c = 'u'
		case 'ñ':
			c = 'n'
		}
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		}
	}
	return b.String()
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func weighted[T any](r *rand.Rand, xs []T, weight func(T) int) T {
	total := 0
	for _, x := range xs {
		total += weight(x)
	}
	n := r.IntN(total)
	for _, x := range xs {
		if n -= weight(x); n < 0 {
			return x
		}
	}
	return xs[len(xs)-1]
}

// text, date and num turn Go zero values into NULL.
func text(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func date(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// dateOf is t's calendar day at midnight.
func dateOf(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

func (g *seeder) benefitCenters() pgx.CopyFromSource {
	i := 0
	return pgx.CopyFromFunc(func() ([]any, error) {
		if i == len(benefitCenters) {
			return nil, nil
		}
		i++
		return []any{int64(i), benefitCenters[i-1]}, nil
	})
}

func (g *seeder) services() pgx.CopyFromSource {
	i := 0
	return pgx.CopyFromFunc(func() ([]any, error) {
		if i == len(seedServices) {
			return nil, nil
		}
		s := seedServices[i]
		i++
		var cost pgtype.Numeric
		if err := cost.Scan(s.cost); err != nil {
			return nil, err
		}
		var center any
		if s.center > 0 {
			center = int64(s.center)
		}
		return []any{int64(i), s.name, cost, center}, nil
	})
}

var clientColumns = []string{"id", "rut", "passport", "first_name", "second_name", "last_name",
	"second_last_name", "email", "phone", "occupation", "birth_date", "country",
	"marital_status", "gender", "region", "commune", "address", "created_at"}

// clientRow generates client id as it is now, and when it was created.
func (g *seeder) clientRow(id int) (person, time.Time) {
	r := g.client.at(id)
	p := g.newPerson(r, g.rutBody(id), g.clientSurname(id))
	// Some RUTs are stored as typed at the counter: dotted, or with a
	// lower-case k, so that the report's rut filter must normalize.
	rt := rut.New(g.rutBody(id))
	if r.IntN(100) < 12 {
		p.rut = rt.Dotted()
	}
	if rt.Check == 'K' && r.IntN(4) == 0 {
		p.rut = strings.Replace(p.rut, "K", "k", 1)
	}
	created := g.contractCreated(int(g.firstContract[id-1])).Add(-time.Duration(5+r.IntN(240)) * time.Minute)
	return p, created
}

func (g *seeder) clients() pgx.CopyFromSource {
	id := 0
	row := make([]any, len(clientColumns))
	return pgx.CopyFromFunc(func() ([]any, error) {
		if id == len(g.firstContract) {
			return nil, nil
		}
		id++
		p, created := g.clientRow(id)
		row[0] = int64(id)
		row[1] = p.rut
		row[2] = text(p.passport)
		row[3] = p.first
		row[4] = text(p.second)
		row[5] = p.last
		row[6] = text(p.secondLast)
		row[7] = text(p.email)
		row[8] = text(p.phone)
		row[9] = text(p.occupation)
		row[10] = date(p.birth)
		row[11] = text(p.country)
		row[12] = text(p.marital)
		row[13] = text(p.gender)
		row[14] = text(p.region)
		row[15] = text(p.commune)
		row[16] = text(p.address)
		row[17] = created
		return row, nil
	})
}

var contractColumns = []string{"id", "client_id", "service_id", "status", "code", "quantity_quotas",
	"date_first_payment", "created_at", "attended_by",
	"client_rut", "client_passport", "client_first_name", "client_second_name", "client_last_name",
	"client_second_last_name", "client_birth_date", "client_occupation", "client_email", "client_phone",
	"client_country", "client_marital_status", "client_gender", "client_region", "client_commune", "client_address",
	"payer_rut", "payer_passport", "payer_first_name", "payer_second_name", "payer_last_name",
	"payer_second_last_name", "payer_birth_date", "payer_occupation", "payer_email", "payer_phone",
	"payer_country", "payer_marital_status", "payer_gender", "payer_region", "payer_commune", "payer_address"}

func putPerson(row []any, p person) {
	row[0] = text(p.rut)
	row[1] = text(p.passport)
	row[2] = text(p.first)
	row[3] = text(p.second)
	row[4] = text(p.last)
	row[5] = text(p.secondLast)
	row[6] = date(p.birth)
	row[7] = text(p.occupation)
	row[8] = text(p.email)
	row[9] = text(p.phone)
	row[10] = text(p.country)
	row[11] = text(p.marital)
	row[12] = text(p.gender)
	row[13] = text(p.region)
	row[14] = text(p.commune)
	row[15] = text(p.address)
}

func (g *seeder) contracts() pgx.CopyFromSource {
	c := 0
	row := make([]any, len(contractColumns))
	return pgx.CopyFromFunc(func() ([]any, error) {
		if c == g.n {
			return nil, nil
		}
		c++
		clientID := int(g.clientOf[c-1])
		client, _ := g.clientRow(clientID)
		r := g.contract.at(c)
		created := g.contractCreated(c)

		// The contract keeps the client as they were when it was signed:
		// for some, an address or phone they have changed since.
		snap := client
		if r.IntN(100) < 15 {
			snap.region, snap.commune = place(r)
			snap.address = address(r)
			if r.IntN(2) == 0 {
				snap.phone = phone(r)
			}
		}
		if r.IntN(100) < 5 {
			if rt, err := rut.Parse(snap.rut); err == nil {
				if strings.Contains(snap.rut, ".") {
					snap.rut = rt.String()
				} else {
					snap.rut = rt.Dotted()
				}
			}
		}
		payer := snap
		if r.IntN(100) >= 75 {
			// Someone else pays: often a relative sharing a surname.
			last := ""
			if r.IntN(2) == 0 {
				last = client.last
			}
			payer = g.newPerson(r, rutMin+r.IntN(rutSpan), last)
		}

		row[0] = int64(c)
		row[1] = int64(clientID)
		row[2] = int64(1 + r.IntN(len(seedServices)))
		row[3] = weighted(r, contractStatuses, choice.w).name
		row[4] = fmt.Sprintf("CT-%d-%06d", created.Year(), c)
		row[5] = int32(pick(r, quotaChoices))
		row[6] = nil
		if r.IntN(100) < 98 {
			row[6] = dateOf(created).Add(time.Duration(5+r.IntN(31)) * day)
		}
		row[7] = created
		row[8] = pick(r, g.staff)
		putPerson(row[9:25], snap)
		putPerson(row[25:41], payer)
		return row, nil
	})
}

// plannedProcess is a process of a contract, with how many tasks it has.
type plannedProcess struct {
	tasks   int
	role    string
	caption string
	date    time.Time
	rit     string
}

// planContract generates contract c's processes. It is called once for
// the processes and again for the tasks, with the same result.
func (g *seeder) planContract(c int) []plannedProcess {
	r := g.plan.at(c)
	created := g.contractCreated(c)
	n := 3
	switch x := r.IntN(100); {
	case x < 5:
		n = 0
	case x < 35:
		n = 1
	case x < 70:
		n = 2
	}
	plan := g.planBuf[:0]
	clientLast := strings.ToUpper(g.clientSurname(int(g.clientOf[c-1])))
	for range n {
		var p plannedProcess
		if r.IntN(100) >= 5 {
			p.tasks = 1 + r.IntN(10)
		}
		role := pick(r, processRoles)
		if r.IntN(100) >= 7 {
			p.role = role.name
		}
		if r.IntN(100) >= 6 {
			other := strings.ToUpper(pick(r, surnames))
			switch {
			case role.name == "Imputado":
				p.caption = "MINISTERIO PÚBLICO con " + clientLast
			case role.plaintf:
				p.caption = clientLast + " con " + other
			default:
				p.caption = other + " con " + clientLast
			}
		}
		start := dateOf(created).Add(time.Duration(3+r.IntN(200)) * day)
		if r.IntN(100) >= 10 {
			p.date = start
		}
		p.rit = fmt.Sprintf("%c-%d-%d", "CCOFE"[r.IntN(5)], 1+r.IntN(20000), start.Year())
		plan = append(plan, p)
	}
	g.planBuf = plan
	return plan
}

var processColumns = []string{"id", "contract_id", "role", "caption", "process_date"}

func (g *seeder) processes() pgx.CopyFromSource {
	c, id := 0, 0
	var plan []plannedProcess
	row := make([]any, len(processColumns))
	return pgx.CopyFromFunc(func() ([]any, error) {
		for len(plan) == 0 {
			if c == g.n {
				return nil, nil
			}
			c++
			plan = g.planContract(c)
		}
		p := plan[0]
		plan = plan[1:]
		id++
		row[0] = int64(id)
		row[1] = int64(c)
		row[2] = text(p.role)
		row[3] = text(p.caption)
		row[4] = date(p.date)
		return row, nil
	})
}

var taskColumns = []string{"id", "process_id", "name", "title", "detail", "code", "end_date",
	"duration", "status", "progress", "executor", "execution_date"}

func (g *seeder) tasks() pgx.CopyFromSource {
	c, processID, taskID := 0, 0, 0
	var plan []plannedProcess
	left := 0 // tasks left in plan[0]
	var r *rand.Rand
	var created time.Time
	row := make([]any, len(taskColumns))
	return pgx.CopyFromFunc(func() ([]any, error) {
		for left == 0 {
			if len(plan) > 0 {
				plan = plan[1:]
			}
			for len(plan) == 0 {
				if c == g.n {
					return nil, nil
				}
				c++
				plan = g.planContract(c)
				r = g.task.at(c)
				created = g.contractCreated(c)
			}
			processID++
			left = plan[0].tasks
		}
		left--
		taskID++
		p := plan[0]
		from := p.date
		if from.IsZero() {
			from = dateOf(created)
		}

		name := pick(r, taskNames)
		row[0] = int64(taskID)
		row[1] = int64(processID)
		row[2] = name
		switch x := r.IntN(1000); {
		case x < 20:
			row[3] = nil
		case x < 23:
			row[3] = "-- sin título --"
		default:
			row[3] = name + ", causa " + p.rit
		}
		switch x := r.IntN(1000); {
		case x < 30:
			row[4] = nil
		case x < 36:
			row[4] = pick(r, oddDetails)
		default:
			tmpl := pick(r, taskDetails)
			if strings.Contains(tmpl, "%[") {
				when := from.Add(time.Duration(r.IntN(90)) * day)
				tmpl = fmt.Sprintf(tmpl, pick(r, documents), pick(r, courts),
					when.Format("02/01/2006"), fmt.Sprintf("%02d:%02d", 8+r.IntN(6), 15*r.IntN(4)))
			}
			row[4] = tmpl
		}
		row[5] = fmt.Sprintf("TK-%08d", taskID)
		row[6] = nil
		if r.IntN(100) >= 5 {
			row[6] = from.Add(time.Duration(1+r.IntN(365)) * day)
		}
		row[7] = nil
		if r.IntN(100) >= 12 {
			row[7] = int32(15 * (1 + r.IntN(32)))
		}
		status := weighted(r, taskStatuses, choice.w).name
		row[8] = status
		var progress int
		nullExec := 4
		switch status {
		case "Pendiente":
			progress = 10 * r.IntN(2)
			nullExec = 50
		case "En Curso":
			progress = 10 + r.IntN(86)
		case "Cancelado":
			progress = r.IntN(81)
		default:
			progress = 100
		}
		row[9] = int32(progress)
		row[10] = nil
		if r.IntN(100) >= 3 {
			row[10] = pick(r, g.staff)
		}
		row[11] = nil
		if r.IntN(100) >= nullExec {
			us := r.Int64N(int64(300 * day / time.Microsecond))
			row[11] = from.Add(time.Duration(us) * time.Microsecond)
		}
		return row, nil
	})
}

var userColumns = []string{"id", "name", "email", "username", "rut", "phone",
	"last_entry", "status", "created_at", "updated_at"}

// userName is user id's full name; the users also attend contracts and
// execute tasks.
func (g *seeder) userName(id int) string {
	r := g.user.at(id)
	p := g.newPerson(r, 0, "")
	name := p.first
	if p.second != "" {
		name += " " + p.second
	}
	name += " " + p.last
	if p.secondLast != "" {
		name += " " + p.secondLast
	}
	return name
}

func (g *seeder) users() pgx.CopyFromSource {
	id := 0
	seen := make(map[string]int)
	row := make([]any, len(userColumns))
	end := contractsTo.Add(day)
	return pgx.CopyFromFunc(func() ([]any, error) {
		if id == len(g.staff) {
			return nil, nil
		}
		id++
		// Same draws as userName, then the user's own.
		r := g.user.at(id)
		p := g.newPerson(r, 0, "")
		local := fold(p.first) + "." + fold(p.last)
		seen[local]++
		if k := seen[local]; k > 1 {
			local += fmt.Sprint(k)
		}
		email := local + "@estudiolegal.cl"
		created := usersFrom.Add(time.Duration(r.Int64N(int64(6*365*day/time.Second))) * time.Second)
		row[0] = int64(id)
		row[1] = g.staff[id-1]
		row[2] = email
		row[3] = email
		row[4] = rut.New(g.rutBody(rutSpan - id)).String()
		row[5] = phone(r)
		row[6] = nil
		if r.IntN(100) >= 12 {
			row[6] = created.Add(time.Duration(r.Int64N(int64(end.Sub(created)/time.Second))) * time.Second)
		}
		status := "A"
		switch x := r.IntN(100); {
		case x < 10:
			status = "I"
		case x < 15:
			status = "B"
		}
		row[7] = status
		row[8] = created
		row[9] = nil
		if r.IntN(100) >= 35 {
			row[9] = created.Add(time.Duration(r.Int64N(int64(end.Sub(created)/time.Second))) * time.Second)
		}
		return row, nil
	})
}
