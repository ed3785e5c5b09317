//go:build pgx5

// pgx v5 (golang-github-jackc-pgx-v5-dev), chosen by run.sh where it is
// installed.
package frameworks

import (
	"context"

	"github.com/jackc/pgx/v5"
)

const pgxVersion = "v5"

type Conn = pgx.Conn

func connect(ctx context.Context, dsn string) (*Conn, error) {
	return pgx.Connect(ctx, dsn)
}
