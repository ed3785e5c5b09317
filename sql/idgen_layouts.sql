--
-- idgen_layouts: decoding under a layout given as an argument, against
-- IDs minted by each layout's owner's own code where that code runs
-- (pgEdge snowflake, Twitter's IdWorker, Instagram's next_id(), Sonyflake,
-- idgen), the examples owners published, and IDs built from a published
-- description.  Each block says where its vectors came from; the owners'
-- code is not part of this repository, only what it minted.
--

SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;

SET TimeZone = 'UTC';

-- Discord: the example in Discord's developer documentation ("Snowflakes":
-- 175928847299117063 is 2016-04-30 11:18:25.796 UTC, internal worker 1,
-- internal process 0, increment 7; worker and process are the 10-bit shard
-- here, worker above process), and the example of the discord-snowflake
-- npm package's README (90339695967350784: 2015-09-07 06:57:41.949 UTC,
-- worker 0, process 3, increment 0; a third party's, not Discord's).
-- Discord publishes no generator code, so nothing of its own was run.
SELECT * FROM idgen_decode(175928847299117063, 'discord');
SELECT shard >> 5 AS worker, shard & 31 AS process, sequence AS increment
  FROM idgen_decode(175928847299117063, 'discord');
SELECT * FROM idgen_decode(90339695967350784, 'discord');

-- Twitter: the example of the Wikipedia article "Snowflake ID"
-- (1541815603606036480: 2022-06-28 16:07:40.105 UTC; a third party's)
SELECT * FROM idgen_decode(1541815603606036480, 'twitter');
SELECT id_to_timestamp(1541815603606036480, 'twitter');
-- and IDs minted by Twitter's own IdWorker.scala (tag snowflake-2010 of
-- its public, archived repository, compiled unmodified with Debian's Scala
-- 2.11.12 against stand-ins for the stats, logging, scribe and thrift
-- classes it imports, which take no part in the ID), on 2026-12-01:
-- get_id() of IdWorker(workerId, datacenterId) with the datacenter and
-- worker below, the call's place in its millisecond as the sequence, and
-- System.currentTimeMillis read before and after the call (the same ms for
-- each of these).  Its source: twepoch 1288834974657, sequence 12 bits at
-- 0, worker 5 bits at 12, datacenter 5 bits at 17, time at 22.
SELECT v.id, d.created_at, d.shard >> 5 AS datacenter, d.shard & 31 AS worker,
       d.sequence,
       (d.created_at, d.shard >> 5, d.shard & 31, d.sequence)
     = (to_timestamp(v.ms / 1000.0), v.datacenter, v.worker, v.seq) AS as_minted
  FROM (VALUES
    -- (id, currentTimeMillis, datacenterId, workerId, sequence)
    (2127723638659616768, 1796123821307, 1, 1, 0),
    (2127723638663675906, 1796123821308, 0, 0, 2),
    (2127723638669418498, 1796123821309, 11, 26, 2),
    (2127723638672060417, 1796123821309, 31, 31, 1),
    (2127723638672605187, 1796123821310, 4, 4, 3)
  ) v(id, ms, datacenter, worker, seq),
  idgen_decode(v.id, 'twitter') d
 ORDER BY v.id;

-- Instagram: the worked example of Instagram Engineering's "Sharding &
-- IDs at Instagram" (41 bits of ms since its example epoch 2011-01-01,
-- 1387263000 ms later; shard 1341; sequence 5001 % 1024), written as a
-- specification, and the preset with the epoch of its next_id() function
SELECT * FROM idgen_decode((1387263000::bigint << 23) | (1341 << 10) | (5001 % 1024),
    'epoch=2011-01-01 00:00:00+00; shard_bits=13; sequence_bits=10');
SELECT * FROM idgen_decode((1000::bigint << 23) | (1341 << 10) | 7, 'instagram');
-- and IDs minted on 2026-12-01 by the post's own next_id() function (run
-- as published, shard_id 5, on PostgreSQL 15, its sequence set to 1021 so
-- that seq_id % 1024 wraps), with the clock_timestamp() read around each
-- call: 11:13:00.794915-11:13:00.795484 UTC.  In the order minted: the
-- sequence wraps inside the millisecond, so the last two are smaller.
SELECT * FROM idgen_decode(4042500050876635134, 'instagram')
UNION ALL SELECT * FROM idgen_decode(4042500050876635135, 'instagram')
UNION ALL SELECT * FROM idgen_decode(4042500050876634112, 'instagram')
UNION ALL SELECT * FROM idgen_decode(4042500050876634113, 'instagram');

-- pgEdge snowflake: IDs minted by the real extension, not built from a
-- reading of its documentation.  pgEdge snowflake 2.6.0 (tag v2.6.0 of its
-- public repository, built against PostgreSQL 15.20 with PGXS in a
-- throwaway root), on 2026-12-01: snowflake.nextval() with snowflake.node
-- set to 1, 37, 512 (a sequence of INCREMENT 1000, whose count passes
-- 4095 and rolls into the next millisecond) and 1023, and what the same
-- extension's snowflake.format(id) said of each (ts is
-- to_timestamp(snowflake.get_epoch(id)); "id" in format is the node,
-- get_node; count is get_count).  Its snowflake.c: 41 bits of ms since
-- 1672531200 s (2023-01-01 00:00:00 UTC) at bit 22, the 10-bit node at
-- bit 12, the 12-bit counter at bit 0 -- the node above the counter.
-- 518356677230219265 was minted with node 37 (count 1) and read again by the
-- same build; 136169504773242881 is the example of pgEdge's
-- docs/snowflake_functions.md, whose node 1 and count 3 the extension
-- does not say: it says node 0, count 1 (the docs' ts agrees).
SELECT v.id, d.created_at, d.shard AS node, d.sequence AS count,
       (d.created_at, d.shard, d.sequence) = (v.ts, v.node, v.count) AS as_pgedge_says
  FROM (VALUES
    -- (id, snowflake.format(id)->>'ts', ->'id', ->'count')
    (136169504773242881, '2024-01-11 18:08:59.845+00'::timestamptz, 0, 1),
    (518356677230219265, '2026-12-01 09:24:22.453+00', 37, 1),
    (518383815148703744, '2026-12-01 11:12:12.637+00', 1, 0),
    (518383815148703746, '2026-12-01 11:12:12.637+00', 1, 2),
    (518383815153045505, '2026-12-01 11:12:12.638+00', 37, 1),
    (518383815154991104, '2026-12-01 11:12:12.638+00', 512, 0),
    (518383815154992104, '2026-12-01 11:12:12.638+00', 512, 1000),
    (518383815154995104, '2026-12-01 11:12:12.638+00', 512, 4000),
    (518383815159185408, '2026-12-01 11:12:12.639+00', 512, 0),
    (518383815157084165, '2026-12-01 11:12:12.638+00', 1023, 5)
  ) v(id, ts, node, count),
  idgen_decode(v.id, 'pgedge') d
 ORDER BY v.id;
-- and its time, by id_to_timestamp and min_id_at
SELECT id_to_timestamp(518356677230219265, 'pgedge'),
       min_id_at('2026-12-01 09:24:22.453+00', 'pgedge') <= 518356677230219265
   AND 518356677230219265 < min_id_at('2026-12-01 09:24:22.454+00', 'pgedge')
       AS pgedge_brackets;

-- Sonyflake: 39 bits of 10 ms units since 2014-09-01, the 8-bit sequence
-- above the 16-bit machine ID (its README's layout), built by hand
SELECT * FROM idgen_decode((8640000::bigint << 24) | (5 << 16) | 4242, 'sonyflake');
SELECT min_id_at('2014-09-02 00:00:00.009+00', 'sonyflake') = (8640000::bigint << 24) AS ten_ms_units;
-- and IDs minted by Sonyflake itself: sony/sonyflake v1.3.0 (tag of its
-- public repository, built with Debian's Go 1.19.8), on 2026-12-01,
-- NextID() of generators with the default StartTime and MachineID set to
-- 1, 4242, 65535 and 7 (300 IDs in a row from the last, so its 8-bit
-- sequence passes 255 into the next 10 ms), each with what the same
-- library's Decompose(id) said: time (10 ms units since StartTime),
-- machine-id, sequence.  Its sonyflake.go: BitLenTime 39, BitLenSequence
-- 8, machine 16 bits; time << 24 | sequence << 16 | machine; default
-- StartTime 2014-09-01 00:00:00 UTC; unit 1e7 ns.
SELECT v.id, d.created_at, d.shard AS machine_id, d.sequence,
       (d.created_at, d.shard, d.sequence)
     = ('2014-09-01 00:00:00+00'::timestamptz + v.time * interval '10 ms', v.machine, v.seq)
       AS as_decompose_says
  FROM (VALUES
    -- (id, Decompose's time, machine-id, sequence)
    (648597308845326337, 38659412196, 1, 0),
    (648597308845461650, 38659412196, 4242, 2),
    (648597308845522943, 38659412196, 65535, 2),
    (648597308862038023, 38659412196, 7, 255),
    (648597308862103559, 38659412197, 7, 0)
  ) v(id, time, machine, seq),
  idgen_decode(v.id, 'sonyflake') d
 ORDER BY v.id;
-- Sonyflake v2 (sony/sonyflake/v2 v2.2.0, built the same way, MachineID
-- 4242) keeps the layout but moves the default StartTime to 2025-01-01
-- 00:00:00 UTC: the preset, v1's, reads its IDs a decade early, and a
-- specification reads them as its ToTime(id) and Decompose(id) did
-- (2026-12-01 11:15:28.18 UTC, time 6043412818, machine 4242, sequence 2)
SELECT id_to_timestamp(101391642224890002, 'sonyflake') AS read_as_v1;
SELECT * FROM idgen_decode(101391642224890002,
    'epoch=2025-01-01 00:00:00+00; unit=10ms; shard_bits=16; sequence_bits=8; order=sequence-shard');

-- idgen's own default layout, as a preset: the same as the server's here
-- (the test instance runs the default layout), for a built ID and for one
-- idgen_next() mints now for shard 7
SELECT idgen_decode(4194309127, 'idgen') = idgen_decode(4194309127) AS same_as_server;
SELECT d.shard, d = idgen_decode(m.id) AS same_as_server
  FROM (SELECT idgen_next(7) AS id) m, idgen_decode(m.id, 'idgen') d;

-- min_id_at by layout brackets a time, as the server's does
SELECT min_id_at('2016-04-30 11:18:25.796+00', 'discord') <= 175928847299117063
   AND 175928847299117063 < min_id_at('2016-04-30 11:18:25.797+00', 'discord')
       AS discord_brackets;
SELECT min_id_at(id_to_timestamp(1541815603606036480, 'twitter'), 'Twitter') <= 1541815603606036480
       AS twitter_brackets_any_case;

-- the widest fields leave one bit of time
SELECT * FROM idgen_decode(1, 'epoch=2020-01-01; shard_bits=31; sequence_bits=31');

-- a specification: spaces around items, unit, order
SELECT * FROM idgen_decode(5 << 3 | 2,
    ' epoch = 2020-01-01 00:00:00+00 ; unit=1s; shard_bits=3; sequence_bits=2; order=sequence-shard ');

-- refused
SELECT idgen_decode(1, 'snowflakes');
SELECT idgen_decode(1, 'epoch=2020-01-01; shard_bits=40');
SELECT idgen_decode(1, 'shard_bits=10; sequence_bits=12');
SELECT idgen_decode(1, 'epoch=now; shard_bits=10');
SELECT idgen_decode(1, 'epoch=2020-01-01; unit=3 minutes');
SELECT idgen_decode(1, 'epoch=2020-01-01; order=up-down');
SELECT idgen_decode(1, 'epoch=2020-01-01; colour=blue');
-- a key given twice, even with the same value (spaces do not hide it)
SELECT idgen_decode(1, 'epoch=2020-01-01; shard_bits=10; sequence_bits=12; shard_bits=12');
SELECT idgen_decode(1, 'epoch=2020-01-01; epoch = 2020-01-01');
\set VERBOSITY sqlstate
SELECT idgen_decode(1, 'epoch=2020-01-01; order=sequence-shard; order=shard-sequence');
\set VERBOSITY default
SELECT idgen_decode(-1, 'twitter');
SELECT min_id_at('2010-01-01+00', 'twitter');
SELECT min_id_at('infinity', 'discord');
-- 1 s units from 2020 outlast PostgreSQL's timestamps
SELECT id_to_timestamp(9223372036854775807, 'epoch=2020-01-01; unit=1s');
RESET TimeZone;
-- a long layout is quoted in part in a message, never whole
SELECT * FROM idgen_decode(1, repeat('z', 100000));
SELECT * FROM idgen_decode(1, 'epoch=' || repeat('9', 100000));

-- leave no extension behind: each test starts from a database without it
SET client_min_messages = warning;
DROP EXTENSION idgen CASCADE;
RESET client_min_messages;
