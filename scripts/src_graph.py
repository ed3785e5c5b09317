#!/usr/bin/python3
"""scripts/src_graph.py -- the structure of src/ has no loop, and follows the map

    python3 scripts/src_graph.py [--edges]     (in a built tree)

A file of src/ points to another when it includes the other's header or
uses a function or variable only the other defines (read from the built
objects with nm, so that calls through inline functions in headers count
too).  A header belongs to the .c file of its name, or else to the file
that defines what it declares.

The map, the table under "## Where things live" in doc/design.md, lists the
files from the top down: a file uses only files below it.  Each row of the
table is one level; the .c files named in its first column share it, and
may use each other.  Every .c file of src/ must be in the map once.

Prints each loop found and each use of a file the map lists above its user,
and exits 1 if there is one; with --edges, prints the graph.
"""
import os
import re
import subprocess
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'src')
cfiles = sorted(f[:-2] for f in os.listdir(root) if f.endswith('.c'))
missing = [c for c in cfiles if not os.path.exists(os.path.join(root, c + '.o'))]
if missing:
    sys.exit('src_graph: build first (no object for %s)' % ', '.join(missing))


def nm(name, flags):
    out = subprocess.run(['nm', flags, os.path.join(root, name + '.o')],
                         check=True, capture_output=True, text=True).stdout
    return out.split('\n')


defined = {}    # symbol -> file
undefined = {}  # file -> symbols
for c in cfiles:
    for line in nm(c, '--defined-only'):
        parts = line.split()
        if len(parts) == 3 and parts[1] in 'TDBRC' + 'tdbr' and parts[1].isupper():
            defined[parts[2]] = c
    undefined[c] = {l.split()[-1] for l in nm(c, '--undefined-only') if l.strip()}

# a header's owner: the .c file of its name, else the one defining most of
# what it declares
owner = {}
for h in (f[:-2] for f in os.listdir(root) if f.endswith('.h')):
    if h in cfiles:
        owner[h] = h
        continue
    text = open(os.path.join(root, h + '.h')).read()
    names = re.findall(r'\b(idgen_\w+)\s*[(;\[]', text)
    votes = {}
    for n in names:
        if n in defined:
            votes[defined[n]] = votes.get(defined[n], 0) + 1
    if votes:
        owner[h] = max(votes, key=votes.get)

edges = {c: set() for c in cfiles}
for c in cfiles:
    for sym in undefined[c]:
        if sym in defined and defined[sym] != c:
            edges[c].add(defined[sym])
    text = open(os.path.join(root, c + '.c')).read()
    for h in re.findall(r'^#include "(\w+)\.h"', text, re.M):
        if owner.get(h, c) != c:
            edges[c].add(owner[h])

if '--edges' in sys.argv:
    for c in cfiles:
        print('%s -> %s' % (c, ' '.join(sorted(edges[c])) or '(nothing)'))

# depth-first search for back edges
loops = []
state = {}


def visit(c, path):
    state[c] = 1
    for d in sorted(edges[c]):
        if state.get(d) == 1:
            loops.append(path[path.index(d):] + [d])
        elif d not in state:
            visit(d, path + [d])
    state[c] = 2


for c in cfiles:
    if c not in state:
        visit(c, [c])
for loop in loops:
    print('src_graph: a loop: ' + ' -> '.join(loop))


# the map's order: one level per row of the table, from the top down
def map_levels():
    path = os.path.join(root, '..', 'doc', 'design.md')
    level = {}
    problems = []
    in_map = False
    row = 0
    for line in open(path, encoding='utf-8'):
        if line.startswith('## '):
            in_map = line.strip() == '## Where things live'
            continue
        if not in_map or not line.startswith('|'):
            continue
        first = line.split('|')[1]
        names = re.findall(r'`src/(\w+)\.c`', first)
        if not names:
            continue            # the header, its rule, a row of a header alone
        row += 1
        for n in names:
            if n in level:
                problems.append('src/%s.c is in the map twice' % n)
            level[n] = row
    if not level:
        sys.exit('src_graph: no map found under "## Where things live" in doc/design.md')
    for c in cfiles:
        if c not in level:
            problems.append('src/%s.c is not in the map' % c)
    for n in sorted(level):
        if n not in cfiles:
            problems.append('the map names src/%s.c, which does not exist' % n)
    return level, problems


level, problems = map_levels()
for c in cfiles:
    for d in sorted(edges[c]):
        if c in level and d in level and level[d] < level[c]:
            problems.append('src/%s.c uses src/%s.c, which the map lists above it'
                            % (c, d))
for p in problems:
    print('src_graph: ' + p)
if loops or problems:
    sys.exit(1)
print('src_graph: %d files, %d edges, no loop, in the map\'s order'
      % (len(cfiles), sum(len(e) for e in edges.values())))
