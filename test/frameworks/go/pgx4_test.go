//go:build !pgx5

// pgx v4 (Debian 12's golang-github-jackc-pgx-v4-dev); run.sh builds with
// the tag pgx5 where v5 is installed instead.  The two differ here only by
// the import path.
package frameworks

import (
	"context"

	"github.com/jackc/pgx/v4"
)

const pgxVersion = "v4"

type Conn = pgx.Conn

func connect(ctx context.Context, dsn string) (*Conn, error) {
	return pgx.Connect(ctx, dsn)
}
