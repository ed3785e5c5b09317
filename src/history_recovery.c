/*-------------------------------------------------------------------------
 *
 * history_recovery.c
 *		The layout history's durability: recovered from the two files at
 *		start, a version appended for a changed layout, a replayed one
 *		checked.
 *
 * The history is kept where the fence is (fence.c): in idgen.layouts, in
 * the state file beside the fence, and in WAL.  fence.c reads and writes
 * those, under its lock; this file decides what the history is.  At start,
 * from both files, the longer when one is the start of the other; a
 * version is appended when the server starts with another layout on
 * purpose (idgen.allow_layout_change), beginning above every ID minted
 * before; and a standby takes the history its primary logged when it
 * extends its own.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/history_recovery.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/timestamp.h"

#include "history_recovery.h"
#include "layout.h"
#include "layout_history.h"
#include "settings.h"

#define IDGEN_STATE_FILE_NAME	"idgen.state"

/*
 * The layout history as the two files have it: the longer, when the other
 * is the start of it (a crash between writing the two, or one file lost or
 * older); refused when they disagree.  With neither, the configured layout
 * is taken as the only one, and flagged as assumed.
 */
static void
recover_history(IdgenLayoutHistory *history, const IdgenLayoutHistory *from_state,
				bool state_has_history, uint64 state_system, uint64 system_identifier)
{
	IdgenLayoutHistory from_layouts;
	uint64		layouts_system;
	bool		have_layouts;

	have_layouts = idgen_history_read_file(&from_layouts, &layouts_system) == 0;
	if (have_layouts && layouts_system != system_identifier &&
		!idgen_allow_foreign_state)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("idgen layout history \"%s\" belongs to another cluster",
						IDGEN_LAYOUTS_FILE),
				 errdetail("The file was written by the cluster with system identifier " UINT64_FORMAT "; this cluster's is " UINT64_FORMAT ".",
						   layouts_system, system_identifier),
				 errhint("Carry it over with \"%s\" on purpose (pg_upgrade, a restore), as for \"%s\", or move it out of the data directory.",
						 "idgen.allow_foreign_state", IDGEN_STATE_FILE_NAME)));

	if (from_state == NULL && !have_layouts)
	{
		idgen_history_assume(history, &idgen_layout);
		return;
	}
	if (from_state == NULL)
	{
		*history = from_layouts;
		return;
	}

	/*
	 * A state file of 1.2 or earlier beside a history: the server ran an
	 * older idgen since.  If that one changed the layout, nothing says where
	 * its version began.
	 */
	if (!state_has_history && have_layouts)
	{
		const IdgenLayoutVersion *last = &from_layouts.versions[from_layouts.nversions - 1];
		const IdgenLayoutVersion *fence_layout = &from_state->versions[0];

		if (!idgen_layout_equal(&last->layout, &fence_layout->layout))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("idgen state file \"%s\" names a layout that \"%s\" does not end with",
							IDGEN_STATE_FILE_NAME, IDGEN_LAYOUTS_FILE),
					 errdetail("An older idgen changed the layout to shard_bits %d, sequence_bits %d since the history was written; where its IDs began is not known.",
							   fence_layout->layout.shard_bits, fence_layout->layout.sequence_bits),
					 errhint("Move \"%s\" out of the data directory to start with that layout as the only one known; IDs of the versions before then decode by it.",
							 IDGEN_LAYOUTS_FILE)));
		*history = from_layouts;
		return;
	}
	if (!have_layouts || idgen_history_is_prefix(&from_layouts, from_state))
	{
		*history = *from_state;
		return;
	}
	if (idgen_history_is_prefix(from_state, &from_layouts))
	{
		*history = from_layouts;
		return;
	}

	/*
	 * One file carried over from another cluster on purpose (pg_upgrade, a
	 * restore; idgen.allow_foreign_state was checked): its history is the
	 * one its IDs were minted under, where this cluster's own is only what
	 * its first start wrote.
	 */
	if (state_system != system_identifier && layouts_system == system_identifier)
	{
		*history = *from_state;
		return;
	}
	if (layouts_system != system_identifier && state_system == system_identifier)
	{
		*history = from_layouts;
		return;
	}
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("idgen layout histories in \"%s\" and \"%s\" disagree",
					IDGEN_LAYOUTS_FILE, IDGEN_STATE_FILE_NAME),
			 errdetail("\"%s\" has %d versions, \"%s\" %d, and neither is the start of the other.",
					   IDGEN_LAYOUTS_FILE, from_layouts.nversions,
					   IDGEN_STATE_FILE_NAME, from_state->nversions),
			 errhint("One of the files was copied from elsewhere: restore this cluster's own, or move the wrong one out of the data directory.")));
}

/*
 * Refuse a start in a layout other than the last one minted under, unless
 * idgen.allow_layout_change says it is on purpose.  The new version is
 * appended by the fence worker before its first fence move.
 */
static void
check_layout_change(const IdgenLayoutHistory *history, const char *where)
{
	const IdgenLayoutVersion *last = &history->versions[history->nversions - 1];
	char	   *recorded;

	if (idgen_layout_equal(&last->layout, &idgen_layout))
		return;
	recorded = idgen_timestamp_text(last->layout.epoch);
	if (!idgen_allow_layout_change)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("idgen layout differs from the one recorded in %s", where),
				 errdetail("Recorded: epoch %s, shard_bits %d, sequence_bits %d. Configured: epoch %s, shard_bits %d, sequence_bits %d.",
						   recorded, last->layout.shard_bits, last->layout.sequence_bits,
						   timestamptz_to_str(idgen_layout.epoch),
						   idgen_layout.shard_bits, idgen_layout.sequence_bits),
				 errhint("Restore the recorded \"%s\", \"%s\" and \"%s\"; to change the layout on purpose, start once with \"%s\" = on.",
						 "idgen.epoch", "idgen.shard_bits", "idgen.sequence_bits",
						 "idgen.allow_layout_change")));
	if (history->nversions >= IDGEN_MAX_LAYOUT_VERSIONS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("idgen layout history is full"),
				 errdetail("It holds %d versions, the most it can.", IDGEN_MAX_LAYOUT_VERSIONS),
				 errhint("Restore the recorded \"%s\", \"%s\" and \"%s\".",
						 "idgen.epoch", "idgen.shard_bits", "idgen.sequence_bits")));
	ereport(LOG,
			(errmsg("idgen layout changed from epoch %s, shard_bits %d, sequence_bits %d",
					recorded, last->layout.shard_bits, last->layout.sequence_bits),
			 errdetail("\"%s\" is on: new IDs start above every ID minted before, as version %d of the layout history; IDs of earlier versions decode as they were minted.",
					   "idgen.allow_layout_change", history->nversions + 1)));
}

/*
 * The history at start: the two files' (see recover_history), and a start
 * in another layout refused unless on purpose.  from_state is the state
 * file's history (NULL without a file), state_has_history whether the file
 * carried one (1.3 and later: before, its fence's layout alone).
 */
void
idgen_history_recover(IdgenLayoutHistory *history, const IdgenLayoutHistory *from_state,
					  bool state_has_history, uint64 state_system,
					  uint64 system_identifier)
{
	recover_history(history, from_state, state_has_history, state_system,
					system_identifier);
	check_layout_change(history, from_state == NULL ?
						"\"" IDGEN_LAYOUTS_FILE "\"" : "\"" IDGEN_STATE_FILE_NAME "\"");
}

/*
 * idgen.layout_change_at in this layout's milliseconds, or -1 when it is not
 * set: where a change begins its version.  ERROR when the layout cannot
 * have it.
 */
static int64
change_at_ms(void)
{
	TimestampTz at = idgen_layout_change_at;
	int64		ms;

	if (TIMESTAMP_IS_NOBEGIN(at))
		return -1;
	if (at < idgen_layout.epoch ||
		(ms = idgen_ms_of_timestamptz(&idgen_layout, at)) >= idgen_max_ms(&idgen_layout))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"%s\" is outside the new layout", "idgen.layout_change_at"),
				 errdetail("It is %s; the layout runs from %s to %s.",
						   idgen_timestamp_text(at),
						   idgen_timestamp_text(idgen_layout.epoch),
						   idgen_timestamp_text(idgen_layout_end(&idgen_layout)))));
	return ms;
}

/*
 * A change at a given instant, checked at start: every ID minted before
 * (below start_ms) must be below it, or the version could not begin there;
 * nor may it be far ahead: the version's first ID raises the generator,
 * durably, and nothing mints until the clock gets there, so a wrong year
 * would stop minting for a year, whatever was configured afterwards.
 * Bounded as idgen_advance_past() is.
 */
void
idgen_history_check_change_at(const IdgenLayoutHistory *history, int64 start_ms)
{
	int64		at_ms;

	if (idgen_layout_equal(&history->versions[history->nversions - 1].layout,
						   &idgen_layout))
		return;
	at_ms = change_at_ms();
	if (at_ms < 0)
		return;
	if (at_ms < start_ms)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"%s\" is before IDs this server may have minted", "idgen.layout_change_at"),
				 errdetail("The new layout can begin at %s at the earliest.",
						   timestamptz_to_str(idgen_ms_to_timestamptz(&idgen_layout, start_ms))),
				 errhint("Set a later instant: after every node that shares tables with this one stopped minting under the old layout.")));
	if (at_ms - idgen_wall_ms() > idgen_max_advance)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"%s\" is too far ahead of the wall clock", "idgen.layout_change_at"),
				 errdetail("It is " INT64_FORMAT " ms ahead; \"%s\" is %d ms.  This server would mint nothing until then.",
						   at_ms - idgen_wall_ms(), "idgen.max_advance", idgen_max_advance),
				 errhint("Check the instant, its year and time zone; to begin the new layout that far ahead on purpose, raise \"%s\" in postgresql.conf.",
						 "idgen.max_advance")));
}

/*
 * Append the configured layout when it is not the last version (a start or
 * a promotion with idgen.allow_layout_change), and return it; NULL when it
 * is.  The new version begins at idgen.layout_change_at, or at the
 * generator raised to the wall clock: above every ID so far (the generator
 * starts above the recorded fence), and no ID of it exists yet, since
 * minting waits for the fence move that follows.  The caller raises the
 * generator to the version's first millisecond before it publishes the
 * history.
 */
const IdgenLayoutVersion *
idgen_history_append_configured(IdgenLayoutHistory *history, int64 generator_ms)
{
	IdgenLayoutVersion *added;
	int64		first_ms;

	if (idgen_layout_equal(&history->versions[history->nversions - 1].layout,
						   &idgen_layout))
		return NULL;
	first_ms = change_at_ms();
	if (first_ms < 0)
		first_ms = Max(generator_ms, idgen_wall_ms());
	else if (first_ms < generator_ms)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"%s\" is before IDs this server may have minted", "idgen.layout_change_at"),
				 errdetail("The generator is at %s: a standby replayed IDs minted since.",
						   timestamptz_to_str(idgen_ms_to_timestamptz(&idgen_layout, generator_ms))),
				 errhint("Set a later instant and restart, or leave it empty to begin the new layout now.")));

	if (history->nversions >= IDGEN_MAX_LAYOUT_VERSIONS ||
		first_ms >= idgen_max_ms(&idgen_layout) ||
		idgen_first_id_of_ms(&idgen_layout, first_ms) <= history->versions[history->nversions - 1].first_id)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("idgen cannot begin a new layout version"),
				 errdetail("The history holds %d versions (at most %d), and the new one would begin at millisecond " INT64_FORMAT " of %d bits.",
						   history->nversions, IDGEN_MAX_LAYOUT_VERSIONS,
						   first_ms, idgen_time_bits(&idgen_layout)),
				 errhint("Restore the recorded \"%s\", \"%s\" and \"%s\".",
						 "idgen.epoch", "idgen.shard_bits", "idgen.sequence_bits")));
	added = &history->versions[history->nversions++];
	added->first_id = idgen_first_id_of_ms(&idgen_layout, first_ms);
	added->layout = idgen_layout;
	return added;
}

/* Once the history with it is durable and published. */
void
idgen_history_log_added(const IdgenLayoutHistory *history)
{
	const IdgenLayoutVersion *added = &history->versions[history->nversions - 1];

	ereport(LOG,
			(errmsg("idgen layout version %d begins at ID " UINT64_FORMAT,
					history->nversions, added->first_id),
			 errdetail("Epoch %s, shard_bits %d, sequence_bits %d, from %s; IDs below it decode by the versions before.",
					   idgen_timestamp_text(added->layout.epoch),
					   added->layout.shard_bits, added->layout.sequence_bits,
					   idgen_timestamp_text(idgen_ms_to_timestamptz(&added->layout, idgen_ms_of_id(&added->layout, added->first_id))))));
}

/*
 * The primary's history, logged at each start of its fence worker: taken
 * (true) when it is ours with versions added, or when ours was only assumed
 * (both files lost); false when ours has it already.  A standby whose own
 * layout settings are not the primary's last version stops here, as it
 * would be promoted into minting under another layout.
 */
bool
idgen_history_take_replayed(const IdgenLayoutHistory *replayed)
{
	IdgenLayoutHistory ours;
	const IdgenLayoutVersion *last;

	idgen_history_copy(&ours);
	if (idgen_history_is_prefix(replayed, &ours))
		return false;
	if (!idgen_history_is_prefix(&ours, replayed) &&
		!(ours.flags & IDGEN_HISTORY_ASSUMED))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("idgen layout history in WAL disagrees with \"%s\"",
						IDGEN_LAYOUTS_FILE),
				 errdetail("WAL has %d versions, the file %d, and neither is the start of the other.",
						   replayed->nversions, ours.nversions),
				 errhint("The file was copied from another cluster: move it out of the data directory, and the history is taken from WAL.")));

	last = &replayed->versions[replayed->nversions - 1];
	if (!idgen_layout_equal(&last->layout, &idgen_layout) && !idgen_allow_layout_change)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("idgen layout changed on the primary"),
				 errdetail("Its version %d is epoch %s, shard_bits %d, sequence_bits %d; this server is configured with epoch %s, shard_bits %d, sequence_bits %d.",
						   replayed->nversions, idgen_timestamp_text(last->layout.epoch),
						   last->layout.shard_bits, last->layout.sequence_bits,
						   idgen_timestamp_text(idgen_layout.epoch),
						   idgen_layout.shard_bits, idgen_layout.sequence_bits),
				 errhint("Set \"%s\", \"%s\" and \"%s\" as on the primary and restart this server.",
						 "idgen.epoch", "idgen.shard_bits", "idgen.sequence_bits")));
	return true;
}
