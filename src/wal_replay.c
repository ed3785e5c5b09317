/*-------------------------------------------------------------------------
 *
 * wal_replay.c
 *		idgen's WAL resource manager: each record replayed by the
 *		subsystem that wrote it, described for pg_waldump.
 *
 * Records are checked for their size here, once: a record of another size
 * was not written by this build, and replay cannot go on (PANIC, as core's
 * resource managers do).
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/wal_replay.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog_internal.h"
#include "access/xlogreader.h"
#include "lib/stringinfo.h"

#include "fence.h"
#include "lane.h"
#include "lane_table.h"
#include "layout_history.h"
#include "stamp_worker.h"
#include "wal_records.h"
#include "wal_replay.h"

static void
record_data(XLogReaderState *record, void *data, size_t len, const char *what)
{
	if (XLogRecGetDataLen(record) != len)
		elog(PANIC, "idgen_redo: %s record of %u bytes, expected %zu",
			 what, (unsigned) XLogRecGetDataLen(record), len);
	memcpy(data, XLogRecGetData(record), len);
}

static void
history_data(XLogReaderState *record, IdgenLayoutHistory *history, const char *what)
{
	record_data(record, history, sizeof(*history), what);
	if (!idgen_history_check(history))
		elog(PANIC, "idgen_redo: invalid %s record", what);
}

static void
idgen_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;

	if (info == XLOG_IDGEN_FENCE)
	{
		IdgenFenceRecord rec;

		record_data(record, &rec, sizeof(rec), "fence");
		idgen_fence_redo(&rec);
	}
	else if (info == XLOG_IDGEN_LAYOUTS)
	{
		IdgenLayoutHistory history;

		history_data(record, &history, "layout history");
		idgen_fence_redo_history(&history);
	}
	else if (info == XLOG_IDGEN_STAMPED)
	{
		IdgenLayoutHistory stamped;

		history_data(record, &stamped, "stamped history");
		idgen_stamps_replayed(&stamped);
	}
	else if (info == XLOG_IDGEN_LANES)
	{
		IdgenLaneTable table;
		uint32		len = XLogRecGetDataLen(record);

		if (len > sizeof(table))
			elog(PANIC, "idgen_redo: invalid lanes record");
		memcpy(&table, XLogRecGetData(record), len);
		if (!idgen_lane_table_check(&table, len))
			elog(PANIC, "idgen_redo: invalid lanes record");
		idgen_lanes_redo(&table);
	}
	else
		elog(PANIC, "idgen_redo: unknown op code %u", info);
}

static void
idgen_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;

	if (info == XLOG_IDGEN_FENCE &&
		XLogRecGetDataLen(record) == sizeof(IdgenFenceRecord))
	{
		IdgenFenceRecord rec;

		memcpy(&rec, XLogRecGetData(record), sizeof(rec));
		appendStringInfo(buf, "fence id " UINT64_FORMAT "; shard_bits %d, sequence_bits %d",
						 rec.fence_id, rec.layout.shard_bits, rec.layout.sequence_bits);
	}
	else if (info == XLOG_IDGEN_LANES &&
			 XLogRecGetDataLen(record) >= offsetof(IdgenLaneTable, lanes))
	{
		IdgenLaneTable table;

		memcpy(&table, XLogRecGetData(record),
			   Min(XLogRecGetDataLen(record), sizeof(table)));
		appendStringInfo(buf, "%d lanes", table.nlanes);
	}
	else if ((info == XLOG_IDGEN_LAYOUTS || info == XLOG_IDGEN_STAMPED) &&
			 XLogRecGetDataLen(record) == sizeof(IdgenLayoutHistory))
	{
		IdgenLayoutHistory history;

		memcpy(&history, XLogRecGetData(record), sizeof(history));
		appendStringInfo(buf, "%d versions", history.nversions);
		for (int i = 0; i < history.nversions && i < IDGEN_MAX_LAYOUT_VERSIONS; i++)
			appendStringInfo(buf, "; %d from id " UINT64_FORMAT ": shard_bits %d, sequence_bits %d",
							 i + 1, history.versions[i].first_id,
							 history.versions[i].layout.shard_bits,
							 history.versions[i].layout.sequence_bits);
	}
}

static const char *
idgen_identify(uint8 info)
{
	switch (info & ~XLR_INFO_MASK)
	{
		case XLOG_IDGEN_FENCE:
			return "FENCE";
		case XLOG_IDGEN_LAYOUTS:
			return "LAYOUTS";
		case XLOG_IDGEN_STAMPED:
			return "STAMPED";
		case XLOG_IDGEN_LANES:
			return "LANES";
	}
	return NULL;
}

static RmgrData idgen_rmgr = {
	.rm_name = "idgen",
	.rm_redo = idgen_redo,
	.rm_desc = idgen_desc,
	.rm_identify = idgen_identify,
};

void
idgen_wal_register(void)
{
	RegisterCustomRmgr(RM_IDGEN_ID, &idgen_rmgr);
}
