package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// fixtureSQL is most of [LoadFixture]'s data set.
const fixtureSQL = `
INSERT INTO clients (id, rut, passport, first_name, second_name, last_name, second_last_name, email, phone,
                     occupation, birth_date, country, marital_status, gender, region, commune, address, created_at) VALUES
 (3, '17000003-k', 'PE1234567', 'Rosa', NULL, 'Quispe', 'Mamani', 'rosa@example.pe', '+51987654321',
  'Cocinera', '1990-07-14', 'Perú', 'Soltera', 'Femenino', 'Región de Antofagasta', 'Calama', 'Sotomayor 99', '2023-01-03 00:00:00'),
 (2, '9876543-3', NULL, 'Juan', NULL, 'Pérez', NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, '2023-01-02 00:00:00'),
 (1, '12.345.678-5', NULL, 'María', 'José', 'González', 'Muñoz', 'maria.gonzalez@example.cl', '+56911112222',
  'Docente', '1980-02-29', 'Chile', 'Casada', 'Femenino', 'Región Metropolitana de Santiago', 'Ñuñoa',
  'Av. Irarrázaval 1234, depto "B"', '2023-01-01 00:00:00');

INSERT INTO benefit_centers (id, name) VALUES (1, 'Santiago Centro');

INSERT INTO services (id, name, cost, benefit_center_id) VALUES
 (2, 'Gestión de certificados y copias autorizadas', 12500.50, NULL),
 (1, 'Divorcio de mutuo acuerdo', 350000, 1);

INSERT INTO contracts (id, client_id, service_id, status, code, quantity_quotas, date_first_payment, created_at, attended_by)
VALUES
 (6, 3, 1, 'TERMINADO', 'CT-006', 1, '2024-05-01', '2024-04-30 08:00:00', 'Luis Letrado'),
 (5, 3, 1, 'APROBADO', 'CT-SHARED', 3, '2024-04-01', '2024-03-31 08:00:00', 'Luis Letrado'),
 (4, 2, 1, 'APROBADO', 'CT-SHARED', 6, '2024-03-01', '2024-02-28 23:59:59', 'Luis Letrado'),
 (3, 2, NULL, 'ANULADO', 'CT-003', NULL, NULL, '2023-11-01 10:00:00', NULL),
 (2, 1, 2, 'PENDIENTE', 'CT-002', NULL, NULL, '2024-02-20 18:45:00', NULL);

INSERT INTO contracts (id, client_id, service_id, status, code, quantity_quotas, date_first_payment, created_at, attended_by,
    client_rut, client_passport, client_first_name, client_second_name, client_last_name, client_second_last_name,
    client_birth_date, client_occupation, client_email, client_phone, client_country, client_marital_status,
    client_gender, client_region, client_commune, client_address,
    payer_rut, payer_passport, payer_first_name, payer_second_name, payer_last_name, payer_second_last_name,
    payer_birth_date, payer_occupation, payer_email, payer_phone, payer_country, payer_marital_status,
    payer_gender, payer_region, payer_commune, payer_address) VALUES
 (1, 1, 1, 'APROBADO', 'CT-001', 12, '2024-02-01', '2024-01-15 09:30:00.75', 'Ana Abogada',
  '12.345.678-5', NULL, 'María', 'José', 'González', 'Muñoz',
  '1980-02-29', 'Docente', 'maria@example.cl', '+56911112222', 'Chile', 'Casada',
  'Femenino', 'Región Metropolitana de Santiago', 'Ñuñoa', 'Av. Irarrázaval 1234',
  '9.876.543-3', NULL, 'Juan', NULL, 'Pérez', NULL,
  '1975-12-31', 'Comerciante', 'juan@example.cl', '+56933334444', 'Chile', 'Soltero',
  'Masculino', 'Región de Valparaíso', 'Viña del Mar', 'Los Carrera 55');

INSERT INTO processes (id, contract_id, role, caption, process_date) VALUES
 (7, 6, 'Recurrente', 'Quispe con Fisco', '2024-05-05'),
 (6, 6, 'Ejecutante', 'Quispe con Banco', '2024-05-01'),
 (5, 5, 'Solicitante', 'Quispe', NULL),
 (4, 4, 'Requirente', NULL, '2024-03-01'),
 (3, 3, 'Demandado', 'Banco con Pérez', '2023-11-05'),
 (2, 1, NULL, NULL, NULL),
 (1, 1, 'Demandante', 'González con Pérez', '2024-02-10');

INSERT INTO tasks (id, process_id, name, title, detail, code, end_date, duration, status, progress, executor, execution_date) VALUES
 (9, 6, 'Pago de arancel', 'Arancel', NULL, 'T9', '2024-05-03', 1, 'Pendiente', 0, 'Luis Letrado', '2024-05-02 09:00:00+00'),
 (7, 7, 'Alegato en Corte', 'Alegato', NULL, 'T7', '2024-06-01', 2, 'Pendiente', 0, 'Luis Letrado', NULL),
 (8, 6, 'Escrito de téngase presente', 'Escrito', '-- revisar con el abogado jefe', 'T8', '2024-05-02', 1, 'En Curso', 20, 'Luis Letrado', '2024-05-01 16:30:00+00'),
 (6, 5, 'Mediación familiar', 'Mediación', 'Sin acuerdo', 'T6', '2024-04-10', 3, 'En Curso', 40, 'Luis Letrado', NULL),
 (5, 4, 'Cierre del caso', 'Cierre', 'Caso cerrado', 'T5', '2024-01-01', 0, 'Cancelado', 100, 'Luis Letrado', '2023-12-31 23:59:59.000001+00'),
 (4, 4, 'Reunión con cliente', 'Reunión', 'Se revisan antecedentes', 'T4', '2024-04-01', 1, 'Pendiente', 10, 'Luis Letrado', '2024-04-01 09:00:00.25-03'),
 (3, 2, 'Audiencia preparatoria', NULL, NULL, 'T3', NULL, NULL, 'Cancelado', NULL, NULL, NULL),
 (1, 1, 'Redacción de demanda', 'Demanda', E'Se redacta la demanda, con "comillas"\ny salto de línea', 'T1',
  '2024-03-10', 90, 'En Curso', 50, 'Ana Abogada', '2024-03-05 14:07:09.123456+00');

INSERT INTO users (id, name, email, username, rut, phone, last_entry, status, created_at, updated_at) VALUES
 (3, 'Carla Díaz', 'carla@informe.cl', 'carla@informe.cl', '11111111-1', '+56955556666',
  '2024-05-06 07:08:09.987', 'A', '2023-06-01 12:00:00', '2024-05-07 10:00:00'),
 (1, 'Admin', 'admin@informe.cl', 'admin@informe.cl', '22222222-2', NULL, NULL, 'A', '2023-01-01 08:00:00.5', NULL),
 (2, 'Pedro Soto', 'pedro@informe.cl', 'pedro@informe.cl', '7654321-6', '+56977778888',
  '2024-01-02 03:04:05', 'I', '2023-03-03 03:03:03', NULL);
`

// LoadFixture loads the tests' small data set into pool's migrated, empty
// database: every report row and user of it is known, and tests check
// answers against it value by value.
//
// Clients: 1 stores its RUT as 12.345.678-5, 2 as 9876543-3, 3 with a
// lower-case k (17000003-k). Contracts, processes and tasks (rows in report
// order: contract, process, task):
//
//	contract 1 (client 1, CT-001): process 1: tasks T1, T2; process 2: task T3
//	contract 2 (client 1, CT-002): no process
//	contract 3 (client 2, CT-003): process 3 without tasks
//	contract 4 (client 2, CT-SHARED): process 4: tasks T4, T5
//	contract 5 (client 3, CT-SHARED): process 5: task T6
//	contract 6 (client 3, CT-006): process 6: tasks T8, T9; process 7: task T7
//
// Rows are inserted in reverse or shuffled id order, so that only the
// report's ORDER BY puts them in order. T2's execution date is written
// while the session's TimeZone is America/Santiago.
func LoadFixture(ctx context.Context, pool *pgxpool.Pool) error {
	if _, err := pool.Exec(ctx, fixtureSQL); err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL TimeZone = 'America/Santiago'"); err != nil {
			return err
		}
		// Chile is at UTC-4 in July: this is 14:00 UTC.
		_, err := tx.Exec(ctx, `INSERT INTO tasks (id, process_id, name, title, detail, code, end_date, duration, status, progress, executor, execution_date)
			VALUES (2, 1, 'Presentación de demanda', 'Presentación', '=1+1', 'T2', '2024-07-02', 30, 'Pendiente', 0, 'Ana Abogada', '2024-07-01 10:00:00')`)
		return err
	})
}

// SetDatabaseTimeZone makes the sessions opened from now on on pool's
// database run in zone, resets the pool so that its connections are such
// sessions, and checks that a new one does.
func SetDatabaseTimeZone(ctx context.Context, pool *pgxpool.Pool, zone string) error {
	var alter string
	if err := pool.QueryRow(ctx, "SELECT format('ALTER DATABASE %I SET TimeZone = %L', current_database(), $1::text)", zone).Scan(&alter); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, alter); err != nil {
		return err
	}
	pool.Reset()
	var tz string
	if err := pool.QueryRow(ctx, "SHOW TimeZone").Scan(&tz); err != nil {
		return err
	}
	if tz != zone {
		return fmt.Errorf("postgres: a new session's TimeZone is %q, want %q", tz, zone)
	}
	return nil
}
