#!/usr/bin/env python3
"""bench/report.py: turn bench/run.sh's raw samples into the report.

    python3 bench/report.py OUTDIR

Reads OUTDIR/samples.csv (test,generator,clients,rep,metric,value),
OUTDIR/meta.csv and OUTDIR/generators.csv; writes OUTDIR/results.md (also
printed), OUTDIR/results.csv and, when gnuplot is there, OUTDIR/throughput.png.

Every figure is the median of the repetitions with their min..max.  Ratios
compare idgen with each alternative from the same run, as medians.  The
targets are reported, never asserted: a MISS does not change the exit status.
"""

import csv
import os
import shutil
import statistics
import subprocess
import sys
from collections import defaultdict


def load(outdir):
    samples = defaultdict(dict)     # (test, gen, clients, metric) -> {rep: value}
    with open(os.path.join(outdir, 'samples.csv'), newline='') as f:
        for row in csv.DictReader(f):
            key = (row['test'], row['generator'], int(row['clients']), row['metric'])
            samples[key][int(row['rep'])] = float(row['value'])
    with open(os.path.join(outdir, 'meta.csv'), newline='') as f:
        meta = {row['key']: row['value'] for row in csv.DictReader(f)}
    with open(os.path.join(outdir, 'generators.csv'), newline='') as f:
        gens = {row['key']: row for row in csv.DictReader(f)}
    return samples, meta, gens


class Stat:
    """Median and range of a list of samples."""

    def __init__(self, values):
        self.values = sorted(values)
        self.n = len(self.values)
        self.median = statistics.median(self.values) if values else None
        self.min = self.values[0] if values else None
        self.max = self.values[-1] if values else None

    def __bool__(self):
        return self.n > 0

    def fmt(self, f, spread=True):
        if not self:
            return '–'
        s = f(self.median)
        if spread and self.n > 1:
            s += ' <sub>%s–%s</sub>' % (f(self.min), f(self.max))
        return s


def num(x, digits=0):
    return '{:,.{}f}'.format(x, digits)


def ratio(x):
    return '–' if x is None else '%.2f×' % x


def mb(x):
    return '%.1f' % (x / 1048576)


class Report:
    def __init__(self, outdir):
        self.outdir = outdir
        self.samples, self.meta, self.gens = load(outdir)
        self.md = []
        self.csv = []
        self.targets = []

    # -- access ------------------------------------------------------------

    def reps(self, test, gen, metric, clients=1):
        return self.samples.get((test, gen, clients, metric), {})

    def stat(self, test, gen, metric, clients=1):
        return Stat(list(self.reps(test, gen, metric, clients).values()))

    def gens_in(self, test, clients=None):
        order = list(self.gens)
        found = {g for (t, g, c, m) in self.samples
                 if t == test and (clients is None or c == clients)}
        return [g for g in order if g in found]

    def label(self, g):
        return self.gens[g]['label'] if g in self.gens else g

    def m(self, key, default=''):
        return self.meta.get(key, default)

    # -- output helpers ----------------------------------------------------

    def p(self, line=''):
        self.md.append(line)

    def table(self, header, rows, left=1):
        self.p('| ' + ' | '.join(header) + ' |')
        self.p('|' + '|'.join('---' if i < left else '--:' for i in range(len(header))) + '|')
        for r in rows:
            self.p('| ' + ' | '.join(r) + ' |')
        self.p()

    def row(self, test, gen, clients, metric, unit, st, idgen_ratio=None, note=''):
        if not st:
            return
        self.csv.append([test, gen, self.label(gen), clients, metric, unit,
                         '%.6g' % st.median, '%.6g' % st.min, '%.6g' % st.max, st.n,
                         '' if idgen_ratio is None else '%.4f' % idgen_ratio, note])

    def target(self, name, figure, value, ok_if, threshold, paired=None):
        """One row of the targets table.  value is the ratio of the medians;
        paired, the same ratio per repetition: when those fall on both sides
        of the threshold, the verdict is flagged as within noise."""
        if value is None:
            self.targets.append([name, figure or 'not measured', '–'])
            self.csv.append(['target', name, name, '', 'ratio', '', '', '', '', '', '', 'not measured'])
            return
        ok = ok_if(value)
        note = ''
        if paired and len(paired) > 1 and ok_if(min(paired)) != ok_if(max(paired)):
            note = ' (within noise: per-repetition ratios %.3g–%.3g)' % (min(paired), max(paired))
        self.targets.append([name, figure, ('PASS' if ok else '**MISS**') + note])
        self.csv.append(['target', name, name, '', 'ratio', '', '%.4f' % value,
                         '%.4f' % min(paired) if paired else '', '%.4f' % max(paired) if paired else '',
                         len(paired) if paired else '', '',
                         ('PASS' if ok else 'MISS') + note + ' (' + threshold + ')'])

    # -- the tests ---------------------------------------------------------

    def bulk(self):
        n = int(self.m('bulk_n', '0'))
        floor = self.reps('bulk', 'floor', 'seconds')
        if not floor:
            return
        above = {}
        block_floor = self.reps('bulk', 'block_floor', 'seconds')
        for g in self.gens_in('bulk'):
            if g in ('floor', 'block_floor'):
                continue
            r = self.reps('bulk', g, 'seconds')
            # blocks are measured above the same rows in the same shape
            base = block_floor if g == 'idgen_n' else floor
            above[g] = Stat([(r[k] - base[k]) / n * 1e9 for k in r if k in base])
        idg = above.get('idgen')
        rows = []
        for g in self.gens_in('bulk'):
            total = self.stat('bulk', g, 'seconds')
            st = above.get(g)
            rat = None
            if g not in ('floor', 'block_floor') and idg and st and st.median > 0 and idg.median > 0:
                rat = st.median / idg.median
            rows.append([self.label(g),
                         st.fmt(lambda x: num(x, 1)) if st else '(floor)',
                         total.fmt(lambda x: num(x * 1000, 1)),
                         num(total.median / n * 1e9, 1),
                         '' if g in ('idgen', 'floor', 'block_floor') else ratio(rat)])
            self.row('bulk', g, 1, 'statement_seconds', 's', total)
            if st:
                self.row('bulk', g, 1, 'ns_per_call_above_floor', 'ns', st, rat)
        self.p('## 1. Bulk: `SELECT count(f) FROM generate_series(1, %s)`' % num(n))
        self.p()
        self.p('Time of the statement on the client (psql `\\timing`), in one session. '
               '"Above floor" subtracts the same repetition\'s bare '
               '`SELECT count(*) FROM generate_series(1, N)` (for idgen_next_n, the same N rows '
               'made in the same blocks of 1000 with no ID). '
               'idgen mints at most 1,024 IDs per ms, so %s IDs need %s ms of ID space: '
               'before each idgen statement the script waits (untimed) until the '
               'generator\'s lead over the wall clock has drained to 0, which keeps '
               'every idgen statement under idgen.max_lead (1 s) with the default settings; '
               'idgen\'s waits during this test: %s.'
               % (num(n), num(n / 1024), self.waits_text('bulk')))
        self.p()
        self.table(['Generator', 'ns/call above floor', 'ms per statement',
                    'ns/row in all', 'idgen is ×faster'], rows)

    def select(self):
        gens = self.gens_in('select')
        if not gens:
            return
        clients = sorted({c for (t, g, c, m) in self.samples if t == 'select'})
        ref = 8 if 8 in clients else clients[-1]
        idg = self.stat('select', 'idgen', 'tps', ref)
        rows = []
        for g in gens:
            cells = [self.label(g)]
            for c in clients:
                st = self.stat('select', g, 'tps', c)
                i = self.stat('select', 'idgen', 'tps', c)
                rat = i.median / st.median if (i and st and g != 'idgen') else None
                cells.append(st.fmt(num))
                self.row('select', g, c, 'tps', 'tps', st, rat)
            st = self.stat('select', g, 'tps', ref)
            cells.append('' if g == 'idgen' or not idg else ratio(idg.median / st.median))
            rows.append(cells)
        self.p('## 2. pgbench `SELECT f`: transactions per second')
        self.p()
        self.p('`pgbench -n -M prepared -T %s -c CLIENTS -j min(CLIENTS, 2) -f select.sql`, '
               'the clients on the same 2 cores as the server. With one client every transaction waits '
               'for a round trip between pgbench and its backend, which dominates and makes all '
               'generators look alike; from two clients on both cores stay busy. '
               'idgen\'s waits during this test: %s.'
               % (self.m('seconds'), self.waits_text('select')))
        self.p()
        self.table(['Generator'] + ['%d client%s' % (c, '' if c == 1 else 's') for c in clients]
                   + ['idgen/this at %d' % ref], rows)
        self.p('![pgbench SELECT f: TPS against clients](throughput.png)')
        self.p()
        self.clients = clients

    def inserts(self, test, title, blurb):
        gens = self.gens_in(test)
        if not gens:
            return
        n = int(self.m('small_n' if test == 'small' else 'insert_n', '0'))
        sb = float(self.m('small_shared_buffers_bytes', '0') or 0)
        idg_t = self.stat(test, 'idgen', 'seconds')
        idg_i = self.stat(test, 'idgen', 'index_bytes')
        rows = []
        for g in gens:
            t = self.stat(test, g, 'seconds')
            tb = self.stat(test, g, 'table_bytes')
            ib = self.stat(test, g, 'index_bytes')
            speed = t.median / idg_t.median if (idg_t and g != 'idgen') else None
            size = idg_i.median / ib.median if (idg_i and g != 'idgen') else None
            r = [self.label(g), t.fmt(lambda x: num(x, 2)), num(n / t.median),
                 mb(tb.median), mb(ib.median), num(ib.median / n, 1)]
            if test == 'small' and sb:
                r.append('%.1f×' % (ib.median / sb))
            r += ['' if g == 'idgen' else ratio(speed), '' if g == 'idgen' else ratio(size)]
            rows.append(r)
            self.row(test, g, 1, 'seconds', 's', t, speed)
            self.row(test, g, 1, 'rows_per_second', 'rows/s', Stat([n / v for v in t.values]), speed)
            self.row(test, g, 1, 'table_bytes', 'bytes', tb)
            self.row(test, g, 1, 'index_bytes', 'bytes', ib, size)
        self.p(title)
        self.p()
        self.p(blurb + ' idgen\'s waits during this test: %s.' % self.waits_text(test))
        self.p()
        header = ['Generator', 'seconds', 'rows/s', 'table MB', 'index MB', 'index B/row']
        if test == 'small' and sb:
            header.append('index / shared_buffers')
        header += ['idgen is ×faster', 'idgen index / this']
        self.table(header, rows)

    def pgins(self):
        gens = self.gens_in('pgins')
        if not gens:
            return
        c = int(self.m('insert_clients', '8'))
        idg = self.stat('pgins', 'idgen', 'tps', c)
        rows = []
        for g in gens:
            st = self.stat('pgins', g, 'tps', c)
            rws = self.reps('pgins', g, 'rows', c)
            per = {k: self.reps('pgins', g, 'index_bytes', c)[k] / rws[k] for k in rws if rws[k]}
            tper = {k: self.reps('pgins', g, 'table_bytes', c)[k] / rws[k] for k in rws if rws[k]}
            rat = idg.median / st.median if (idg and g != 'idgen') else None
            rows.append([self.label(g), st.fmt(num), num(statistics.median(tper.values()), 1),
                         num(statistics.median(per.values()), 1),
                         '' if g == 'idgen' else ratio(rat)])
            self.row('pgins', g, c, 'tps', 'tps', st, rat)
            self.row('pgins', g, c, 'table_bytes_per_row', 'bytes', Stat(list(tper.values())))
            self.row('pgins', g, c, 'index_bytes_per_row', 'bytes', Stat(list(per.values())))
        self.p('## 4. pgbench single-row `INSERT`, %d clients' % c)
        self.p()
        self.p('`INSERT INTO t (n) VALUES (1)` with `-M prepared -T %s -j 2`, a fresh table each run; '
               'every transaction commits with synchronous_commit = on, so the WAL flush dominates. '
               'Sizes per row, as the runs insert different numbers of rows. '
               'idgen\'s waits during this test: %s.' % (self.m('seconds'), self.waits_text('pgins')))
        self.p()
        self.table(['Generator', 'TPS', 'table B/row', 'index B/row', 'idgen/this'], rows)

    def capacity(self):
        t = self.stat('capacity', 'idgen', 'seconds')
        if not t:
            return
        n = int(self.m('capacity_n'))
        lead = self.stat('capacity', 'idgen', 'lead_ms')
        lead_id = self.stat('capacity', 'idgen', 'lead_from_id_ms')
        s = self.idgen_stats('capacity')
        self.p('## 6. Capacity: one statement minting %s IDs' % num(n))
        self.p()
        self.p('`SELECT count(id), max(id) FROM (SELECT idgen_next() AS id FROM generate_series(1, %s))`, '
               'started with no lead. At 1,024 IDs per ms this needs %s ms of ID space; the generator may '
               'run idgen.max_lead (1 s) ahead of the wall clock, then callers wait.' % (num(n), num(n / 1024)))
        self.p()
        self.table(['elapsed s', 'IDs per ms', 'lead after (idgen_stats.lead_ms)',
                    'lead after (max id − clock_timestamp())', 'waits', 'wait time ms',
                    'fence waits', 'borrowed ms'],
                   [[num(t.median, 2), num(n / t.median / 1000), num(lead.median) + ' ms',
                     num(lead_id.median) + ' ms', num(s.get('waits', 0)),
                     num(s.get('wait_time_ms', 0)), num(s.get('fence_waits', 0)),
                     num(s.get('borrowed_ms', 0))]])
        for metric, st in (('seconds', t), ('lead_ms', lead), ('lead_from_id_ms', lead_id)):
            self.row('capacity', 'idgen', 1, metric, 'ms' if 'lead' in metric else 's', st)

    def idgen_stats(self, test):
        return {m: v[1] for (t, g, c, m), v in self.samples.items() if t == 'idgen_stats' and g == test}

    def waits_text(self, test):
        s = self.idgen_stats(test)
        if not s:
            return 'not measured'
        return '%s waits (%s ms), %s fence waits, %s max_wait errors' % (
            num(s.get('waits', 0)), num(s.get('wait_time_ms', 0)),
            num(s.get('fence_waits', 0)), num(s.get('max_wait_errors', 0)))

    def stats_table(self):
        tests = [g for (t, g, c, m) in self.samples if t == 'idgen_stats']
        tests = list(dict.fromkeys(tests))
        if not tests:
            return
        cols = ['minted', 'waits', 'wait_time_ms', 'max_wait_errors', 'borrowed_ms',
                'fence_waits', 'fence_advances', 'lead_ms_after']
        rows = []
        for t in tests:
            s = self.idgen_stats(t)
            rows.append([t] + [num(s.get(c, 0)) for c in cols])
            for c in cols:
                if c in s:
                    self.row('idgen_stats', t, 1, c, '', Stat([s[c]]))
        self.p('## idgen_stats during each test')
        self.p()
        self.p('Differences of `idgen_stats` between the start and the end of each test '
               '(lead_ms_after: its value at the end).')
        self.p()
        self.table(['test'] + cols, rows)

    # -- targets -------------------------------------------------------------

    def paired(self, test, metric, clients, f, other, mine='idgen'):
        """f(mine, other) for each repetition that measured both."""
        a = self.reps(test, mine, metric, clients)
        b = self.reps(test, other, metric, clients)
        return [f(a[k], b[k]) for k in sorted(a) if k in b and b[k]]

    def check_targets(self):
        n = int(self.m('bulk_n', '0'))
        floor = self.reps('bulk', 'floor', 'seconds')

        def above(g):   # ns per call above the same repetition's floor
            r = self.reps('bulk', g, 'seconds')
            return {k: (r[k] - floor[k]) / n * 1e9 for k in r if k in floor}

        i = above('idgen')
        for other, name, limit, text in (
                ('clock', 'bulk: idgen ≤ 1.5× clock_timestamp() above floor', 1.5, '<= 1.5'),
                ('seq1', 'bulk: idgen ≤ 1/6 of nextval() CACHE 1', 1 / 6, '<= 0.1667')):
            o = above(other)
            if not i or not o:
                self.target(name, None, None, None, text)
                continue
            a, b = Stat(list(i.values())).median, Stat(list(o.values())).median
            r = a / b
            fig = 'idgen %.1f ns vs %s %.1f ns above floor: %.3f×' % (a, self.label(other), b, r)
            if other == 'seq1':
                fig += ' (1/%.1f)' % (1 / r)
            self.target(name, fig, r, lambda x, lim=limit: x <= lim, text,
                        [i[k] / o[k] for k in i if k in o and o[k]])

        # blocks: idgen_next_n(1000) per ID, above the same rows made in
        # the same shape with no ID, against idgen_next() per call
        bf = self.reps('bulk', 'block_floor', 'seconds')
        bn = self.reps('bulk', 'idgen_n', 'seconds')
        blk = {k: (bn[k] - bf[k]) / n * 1e9 for k in bn if k in bf} if i else {}
        name, text = 'bulk: idgen_next_n(1000) ≤ 1/5 of idgen_next() per ID', '<= 0.2'
        if not i or not blk:
            self.target(name, None, None, None, text)
        else:
            a, b = Stat(list(blk.values())).median, Stat(list(i.values())).median
            self.target(name, 'idgen_next_n %.1f ns per ID above its block floor vs idgen_next() %.1f ns above floor: %s'
                        % (a, b, '1/%.1f' % (b / a) if a > 0 else 'no cost above the floor'),
                        a / b, lambda x: x <= 0.2, text,
                        [blk[k] / i[k] for k in blk if k in i and i[k]])

        def compare(test, other, metric, clients, name, limit, text, higher_is_better=True):
            a = self.stat(test, 'idgen', metric, clients)
            b = self.stat(test, other, metric, clients)
            if not a or not b:
                self.target(name, None, None, None, text)
                return
            if metric == 'seconds':     # as fast: the other's time over ours
                r = b.median / a.median
                fig = 'idgen %.2f s vs %s %.2f s: %.2f× as fast' % (a.median, self.label(other), b.median, r)
                paired = self.paired(test, metric, clients, lambda x, y: y / x, other)
            elif metric == 'tps':
                r = a.median / b.median
                fig = 'idgen %s vs %s %s TPS: %.3f×' % (num(a.median), self.label(other), num(b.median), r)
                paired = self.paired(test, metric, clients, lambda x, y: x / y, other)
            else:                       # index_bytes
                r = a.median / b.median
                fig = 'idgen %s MB vs %s %s MB: %.3f×' % (mb(a.median), self.label(other), mb(b.median), r)
                paired = self.paired(test, metric, clients, lambda x, y: x / y, other)
            if metric == 'index_bytes' and limit is None:
                self.target(name, fig, r, lambda x: abs(x - 1) <= 0.02, text, paired)
            elif higher_is_better:
                self.target(name, fig, r, lambda x: x >= limit, text, paired)
            else:
                self.target(name, fig, r, lambda x: x <= limit, text, paired)

        compare('select', 'clock', 'tps', 8, 'pgbench SELECT, 8 clients: idgen ≥ 0.97× clock_timestamp()',
                0.97, '>= 0.97')
        compare('insert', 'seq1', 'seconds', 1, 'INSERT … SELECT (%s rows): idgen ≥ bigserial'
                % num(int(self.m('insert_n', '0'))), 1.0, '>= 1.0')
        c = int(self.m('insert_clients', '8'))
        compare('pgins', 'seq1', 'tps', c, 'pgbench INSERT, %d clients: idgen ≥ bigserial' % c, 1.0, '>= 1.0')
        small = 'index outgrows shared_buffers (%s, %s rows)' % (
            self.m('small_shared_buffers'), num(int(self.m('small_n', '0'))))
        compare('small', 'seq1', 'seconds', 1, '%s: idgen ≥ bigserial' % small, 1.0, '>= 1.0')
        compare('small', 'uuid4', 'seconds', 1, '%s: idgen ≥ 1.5× gen_random_uuid()' % small, 1.5, '>= 1.5')
        for test in ('insert', 'small'):
            where = 'INSERT … SELECT at %s' % ('shared_buffers 128MB' if test == 'insert'
                                               else self.m('small_shared_buffers'))
            compare(test, 'seq1', 'index_bytes', 1, 'index size, %s: within 2%% of bigserial' % where,
                    None, '|ratio - 1| <= 0.02')
            compare(test, 'uuid4', 'index_bytes', 1, 'index size, %s: ≤ 0.6× the uuid index' % where,
                    0.6, '<= 0.6', higher_is_better=False)

    # -- assembly ----------------------------------------------------------

    def build(self):
        body_start = len(self.md)
        self.bulk()
        self.select()
        self.inserts('insert', '## 3. `INSERT … SELECT` of %s rows' % num(int(self.m('insert_n', '0'))),
                     'Into a fresh table `(id <type> PRIMARY KEY DEFAULT f, n integer)` after a CHECKPOINT, '
                     'one statement and its commit timed on the client; shared_buffers = 128MB. '
                     'Sizes are pg_relation_size of the table and of its primary-key index.')
        self.pgins()
        self.inserts('small', '## 5. Index outgrows shared_buffers: `INSERT … SELECT` of %s rows at shared_buffers = %s'
                     % (num(int(self.m('small_n', '0'))), self.m('small_shared_buffers')),
                     'The insert test again after a restart with shared_buffers = %s: a random key '
                     'dirties and rereads index pages all over the index, a time-ordered key only the '
                     'rightmost one.' % self.m('small_shared_buffers'))
        self.capacity()
        self.stats_table()
        body = self.md[body_start:]
        self.md = self.md[:body_start]

        self.check_targets()
        runtime = int(float(self.m('runtime_s', '0')))
        self.p('# idgen benchmark')
        self.p()
        self.p('Made by `bash bench/run.sh` (%s) on %s: %s, %s, %s; PostgreSQL %s; idgen %s (%s). '
               'Runtime %d min %02d s.' % (self.m('mode'), self.m('date'), self.m('cpu'), self.m('memory'),
                                           self.m('os'), self.m('postgres'), self.m('idgen'),
                                           self.m('commit'), runtime // 60, runtime % 60))
        self.p()
        self.p('Server: %s' % self.m('settings').rstrip('; '))
        if self.m('idgen_settings'):
            self.p()
            self.p('idgen: %s' % self.m('idgen_settings'))
        self.p()
        self.p('Each figure is the median of its repetitions (bulk: %s, pgbench SELECT: %s, the others: %s), '
               'with min–max in small type. Within a repetition the generators take turns, the first one '
               'rotating, so drift hits all alike. Ratios compare the medians of the same run. The '
               'generators other than idgen are written for the benchmark in bench/generators.sql.'
               % (self.m('bulk_reps', self.m('reps')), self.m('select_reps', self.m('reps')), self.m('reps')))
        busy = int(self.m('busy_before', '0') or 0)
        if busy >= 10:
            self.p()
            self.p('**Warning:** other processes kept the CPUs %d%% busy just before the run: '
                   'the figures are noisier than on an idle machine.' % busy)
        self.p()
        self.p('## Targets')
        self.p()
        self.p('Reported, not asserted. Each verdict is on the ratio of the medians; "within noise" marks '
               'one whose per-repetition ratios (each idgen run against the other generator\'s run of the '
               'same repetition) fall on both sides of the target.')
        self.p()
        self.table(['Target', 'Figures', 'Result'], self.targets, left=3)
        self.md += body

    def write(self):
        md = '\n'.join(self.md).rstrip() + '\n'
        with open(os.path.join(self.outdir, 'results.md'), 'w') as f:
            f.write(md)
        with open(os.path.join(self.outdir, 'results.csv'), 'w', newline='') as f:
            w = csv.writer(f)
            w.writerow(['test', 'generator', 'label', 'clients', 'metric', 'unit', 'median', 'min',
                        'max', 'reps', 'idgen_ratio', 'note'])
            w.writerows(self.csv)
        sys.stdout.write(md)

    # -- chart -------------------------------------------------------------

    def chart(self):
        gens = self.gens_in('select')
        if not gens or not shutil.which('gnuplot'):
            print('(no chart: %s)' % ('no select test' if not gens else 'gnuplot not found'), file=sys.stderr)
            return
        dat = os.path.join(self.outdir, 'throughput.dat')
        with open(dat, 'w') as f:
            for g in gens:
                f.write('# %s\n' % self.label(g))
                for c in self.clients:
                    st = self.stat('select', g, 'tps', c)
                    if st:
                        f.write('%d %.1f %.1f %.1f\n' % (c, st.median, st.min, st.max))
                f.write('\n\n')
        term = 'pngcairo size 1100,560 font "sans,11"'
        probe = subprocess.run(['gnuplot'], input='set terminal pngcairo\n', text=True,
                               capture_output=True)
        if probe.returncode != 0 or probe.stderr.strip():
            term = 'png size 1100,560'
        plots = []
        for i, g in enumerate(gens):
            style = 'lw 3 pt 7' if g == 'idgen' else 'lw 1.5 dt 2 pt 6' if g in ('clock', 'one') else 'lw 1.5 pt 6'
            plots.append("'%s' index %d using 1:2:3:4 with yerrorlines %s title '%s'"
                         % (dat, i, style, self.label(g).replace("'", "''")))
        gp = '\n'.join([
            'set terminal %s' % term,
            'set termoption noenhanced',
            "set output '%s'" % os.path.join(self.outdir, 'throughput.png'),
            "set title 'pgbench SELECT f, -M prepared (%s; median of %s runs of %s s, bars min..max)'"
            % (self.m('cpu').replace("'", ''), self.m('select_reps', self.m('reps')), self.m('seconds')),
            "set xlabel 'clients'",
            "set ylabel 'transactions per second'",
            'set logscale x 2',
            'set xtics (%s)' % ', '.join(str(c) for c in self.clients),
            'set xrange [%g:%g]' % (self.clients[0] / 1.3, self.clients[-1] * 1.3),
            'set yrange [0:*]',
            'set format y "%.0s%c"',
            'set key outside right top vertical Left reverse spacing 1.2',
            'set grid',
            'plot ' + ', \\\n     '.join(plots),
        ]) + '\n'
        with open(os.path.join(self.outdir, 'throughput.gp'), 'w') as f:
            f.write(gp)
        res = subprocess.run(['gnuplot'], input=gp, text=True, capture_output=True)
        if res.returncode != 0:
            print('gnuplot failed:\n' + res.stderr, file=sys.stderr)


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: report.py OUTDIR')
    r = Report(sys.argv[1])
    r.build()
    r.write()
    r.chart()


if __name__ == '__main__':
    main()
