-- +goose Up
-- informe_fold: the text as $filter's Informe.fold writes it (internal/odata),
-- for conditions that ignore accents and capitals: "Nunez", "NÚÑEZ" and
-- "núñez" all fold to "nunez", "Ñuble" to "nuble", "Valparaíso" to
-- "valparaiso". Lower case first, by Unicode's rules through informe_case
-- (00009), whatever the database's collation; then the accented Latin
-- letters (Latin-1 and Latin Extended-A, with Romanian's ș and ț and the
-- letters with a caron or a diaeresis and accent) become their base
-- letter: á é í ó ú ü ñ and every other acute, grave, circumflex, tilde,
-- diaeresis, ring, cedilla, caron, macron, breve, ogonek and stroke. Letters
-- that are no accented letter (æ, œ, ß, þ) stay as they are. The combining
-- diacritical marks (U+0300 to U+036F), which text written decomposed
-- carries, and which lower case gives İ, are dropped: translate deletes
-- the characters of its second argument past the end of its third.
--
-- translate rather than the unaccent extension, which a database may not
-- have and whose rules a server's administrator may change: this is
-- IMMUTABLE and the same everywhere, so an expression index could use it.
-- +goose StatementBegin
CREATE FUNCTION informe_fold(value text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
SELECT translate(lower(value COLLATE informe_case),
    'àáâãäåāăąǎçćĉċčďđðèéêëēĕėęěĝğġģĥħìíîïĩīĭįıǐĵķĺļľŀłñńņňŉòóôõöøōŏőǒŕŗřśŝşšșţťŧțùúûüũūŭůűųǔǖǘǚǜŵýÿŷźżž̴̵̶̷̸̡̢̧̨̛̖̗̘̙̜̝̞̟̠̣̤̥̦̩̪̫̬̭̮̯̰̱̲̳̹̺̻̼͇͈͉͍͎̀́̂̃̄̅̆̇̈̉̊̋̌̍̎̏̐̑̒̓̔̽̾̿̀́͂̓̈́͆͊͋͌̕̚ͅ͏͓͔͕͖͙͚͐͑͒͗͛ͣͤͥͦͧͨͩͪͫͬͭͮͯ͘͜͟͢͝͞͠͡',
    'aaaaaaaaaacccccdddeeeeeeeeegggghhiiiiiiiiiijklllllnnnnnoooooooooorrrsssssttttuuuuuuuuuuuuuuuwyyyzzz')
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION informe_fold(text);
