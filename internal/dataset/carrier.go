package dataset

// IDKind is which ids a person's personal values are known by in a row:
// the sets of [github.com/informe/informe/internal/postgres.Withheld] and of a [Carrier], as the view
// subject_withheld names them.
type IDKind uint8

// The kinds of id of a person in a row.
const (
	ClientID         IDKind = iota // a client's id
	ClientContractID               // a contract of the client (a process names its client so)
	PayerContractID                // a contract whose recorded payer it is
	UserID                         // a user's id
	UserName                       // a user named in free text (attended_by, task_executor): no id
)

var idKindNames = [...]string{"client", "client_contract", "payer", "user", "user"}

// String returns the kind as subject_withheld names it.
func (k IDKind) String() string { return idKindNames[k] }

// Carrier is told, as rows are read, whose personal values they carry:
// each row's persons for which it holds at least one personal value
// (after [github.com/informe/informe/internal/postgres.Withheld] nulled those of blocked persons). See [Query.Carried].
type Carrier interface {
	// Carry says a row carried personal values of the person known by id.
	Carry(kind IDKind, id int64)
	// CarryName says a row carried the name of a user, in free text.
	CarryName(name []byte)
}
