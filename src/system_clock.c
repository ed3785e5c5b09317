/*-------------------------------------------------------------------------
 *
 * system_clock.c
 *		idgen_clock(): the kernel's own view of the system clock.
 *
 * Every ID's time is the system clock's, and a server whose clock is off
 * mints IDs that decode to the wrong time and sort out of step with its
 * peers'.  Linux keeps what its time daemon (chrony, ntpd, systemd-timesyncd)
 * last told it: whether the clock is synchronised, and the estimated and
 * maximum error.  adjtimex() with no modes only reads them, and needs no
 * privilege.  Elsewhere those columns are NULL.  With a lease registry, the
 * lease worker also compares this server's clock with the registry's at
 * each round (lease_worker.c); the last columns show what it measured.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/system_clock.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef __linux__
#include <sys/timex.h>
#endif

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/timestamp.h"

#include "lease_gate.h"

#define IDGEN_CLOCK_COLS	7

PG_FUNCTION_INFO_V1(idgen_clock);

Datum
idgen_clock(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[IDGEN_CLOCK_COLS];
	bool		nulls[IDGEN_CLOCK_COLS];
	IdgenRegistryClock registry;

	for (int i = 0; i < IDGEN_CLOCK_COLS; i++)
		nulls[i] = true;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

#ifdef __linux__
	{
		struct timex tx;
		int			state;

		memset(&tx, 0, sizeof(tx));
		state = adjtimex(&tx);
		if (state == -1)
			ereport(ERROR,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("could not read the kernel's clock state: %m")));

		/*
		 * TIME_ERROR is what the kernel answers while STA_UNSYNC is set: no
		 * time daemon has disciplined the clock lately.  Its error figures
		 * then only grow, up to 16 s, and are still shown.
		 */
		values[0] = BoolGetDatum(state != TIME_ERROR);
		values[1] = Float8GetDatum(tx.esterror / 1000.0);
		values[2] = Float8GetDatum(tx.maxerror / 1000.0);
		nulls[0] = nulls[1] = nulls[2] = false;
	}
#endif

	if (idgen_leases_on && idgen_lease_registry_clock(&registry))
	{
		values[3] = Float8GetDatum(registry.offset_us / 1000.0);
		values[4] = Float8GetDatum(registry.error_us / 1000.0);
		values[5] = Float8GetDatum(registry.largest_us / 1000.0);
		values[6] = TimestampTzGetDatum(registry.measured_at);
		nulls[3] = nulls[4] = nulls[5] = nulls[6] = false;
	}

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
