package catalog

// FileWords are the words of a file's name after its dataset's (see
// [Dataset].File): a page of the report and the filter that names it, in
// Spanish and English, by their English word.
var FileWords = map[string]Text{
	"page": {"pagina", "page"}, "contract": {"contrato", "contract"}, "code": {"codigo", "code"},
	"client": {"cliente", "client"}, "rut": {"rut", "rut"},
}
