-- +goose Up
-- informe_case: the collation through which $filter's tolower and toupper
-- (internal/odata) map case, by Unicode's rules, whatever the database's
-- own collation. Under the C locale (initdb --no-locale, as the tests and
-- the demo make their clusters), lower() and upper() change only the ASCII
-- letters: toupper(last_name_client) eq 'VÁSQUEZ' found nothing.
--
-- ICU's root locale when PostgreSQL was built with ICU (initdb then
-- imports ICU's locales; full case mapping: upper('ß') is 'SS'), else the
-- C library's C.UTF-8 locale (glibc 2.35 and later, and most
-- distributions before: one character for one character). Without
-- either, informe cannot map case beyond ASCII, and says so here rather
-- than answer filters wrongly. Only case mapping goes through it:
-- comparisons and sorting keep the database's collation.
-- +goose StatementBegin
DO $$
BEGIN
    BEGIN
        CREATE COLLATION informe_case (provider = icu, locale = 'und');
    EXCEPTION WHEN feature_not_supported THEN
        BEGIN
            CREATE COLLATION informe_case (provider = libc, locale = 'C.UTF-8');
        EXCEPTION WHEN OTHERS THEN
            RAISE EXCEPTION 'informe needs PostgreSQL built with ICU, or the C.UTF-8 locale on the database server, to map case in $filter (tolower, toupper): %', SQLERRM;
        END;
    END;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP COLLATION informe_case;
