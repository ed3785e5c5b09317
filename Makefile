# idgen: time-sorted, unique 64-bit IDs minted in shared memory
#
#   make && make install          build and install into $(PG_CONFIG)'s server
#   make installcheck             pg_regress, isolationtester and perl TAP tests,
#                                 each on its own throwaway preloaded instance
#   make dist                     the release archive for PGXN, from git HEAD
#
# The tests start servers, and initdb refuses to run as root: scripts/test.sh
# does the whole job (packages, build, install, every test) from a fresh machine.

MODULE_big = idgen
OBJS = \
	src/idgen.o \
	src/layout.o \
	src/layout_history.o \
	src/history_recovery.o \
	src/wal_replay.o \
	src/layout_stamp.o \
	src/decode.o \
	src/layout_dependents.o \
	src/stamp_worker.o \
	src/stamp_hooks.o \
	src/stamp_kept.o \
	src/stamp_shards.o \
	src/stamp_write.o \
	src/durable_file.o \
	src/layout_spec.o \
	src/shard.o \
	src/generator.o \
	src/fence_gate.o \
	src/fence.o \
	src/lane_table.o \
	src/lane.o \
	src/lane_durable.o \
	src/lane_restore.o \
	src/lane_figures.o \
	src/lane_late.o \
	src/backfill.o \
	src/lease_gate.o \
	src/lease_set.o \
	src/lease_pool.o \
	src/lane_lease.o \
	src/lease_worker.o \
	src/registry.o \
	src/lease_sql.o \
	src/stats.o \
	src/public_id.o \
	src/settings.o \
	src/text_form.o \
	src/json_form.o \
	src/wait_event.o \
	src/system_clock.o \
	src/worker.o

# The lease worker talks to its registry with libpq, as dblink does.
PG_CPPFLAGS = -I$(libpq_srcdir)
SHLIB_LINK_INTERNAL = $(libpq)

EXTENSION = idgen
# one base script and the upgrade chain, as contrib ships them
DATA = sql/idgen--1.0.sql sql/idgen--1.0--1.1.sql sql/idgen--1.1--1.2.sql sql/idgen--1.2--1.3.sql sql/idgen--1.3--1.4.sql sql/idgen--1.4--1.5.sql sql/idgen--1.5--1.6.sql sql/idgen--1.6--1.7.sql sql/idgen--1.7--1.8.sql
PGFILEDESC = "idgen - time-sorted unique 64-bit IDs"

# The library must be preloaded, so each suite starts its own instance with
# idgen in shared_preload_libraries (the pg_cron pattern).
# Every sql/idgen_*.sql is a test, run in name order, each on its own state
# (the install scripts are sql/idgen--*.sql): a new test is its file and its
# expected/ output, nothing more.
REGRESS = $(patsubst $(srcdir)/sql/%.sql,%,$(sort $(wildcard $(srcdir)/sql/idgen_*.sql)))
# The inputs are read from $(srcdir) (PGXS passes --inputdir=$(srcdir)), the
# instances and results go in the build directory: both work out of tree.
REGRESS_OPTS = --temp-config=$(srcdir)/test/idgen.conf --temp-instance=./tmp_check_regress
ISOLATION = concurrent_mint
ISOLATION_OPTS = --temp-config=$(srcdir)/test/idgen.conf --temp-instance=./tmp_check_iso
# The TAP tests need perl's IPC::Run (Debian: libipc-run-perl), as
# PostgreSQL's test modules do: without it they are skipped, saying so, and
# make installcheck (pgxn check) runs the rest.
IDGEN_TAP_PERL_MODULE ?= IPC::Run
ifeq ($(shell perl -M$(IDGEN_TAP_PERL_MODULE) -e 1 2>/dev/null && echo yes),yes)
TAP_TESTS = 1
else ifneq ($(filter installcheck,$(MAKECMDGOALS)),)
$(info idgen: perl's $(IDGEN_TAP_PERL_MODULE) is not installed (Debian: apt-get install libipc-run-perl), so the TAP tests (t/*.pl) are skipped)
endif

EXTRA_CLEAN = tmp_check_regress

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header dependencies unless the server was configured with
# --enable-depend; the headers are few, so rebuild on any change.
$(OBJS): $(wildcard $(srcdir)/src/*.h)

# Out of tree (make -f SRC/Makefile VPATH=SRC, as pg_buildext does), PGXS
# makes no src/ for the objects.  An absolute path, or make would find the
# source tree's src/ through VPATH and think it made.
$(OBJS): | $(CURDIR)/src
$(CURDIR)/src:
	$(MKDIR_P) $@

# The release archive, as PGXN takes it: a zip of the committed tree under
# one folder named for the release.  META.json's version must be the
# control file's default_version in semantic form (1.0 -> 1.0.0).  Read
# only when dist runs (=, not :=), from the source tree, not the build dir.
DIST_VERSION = $(shell sed -n '/^ *"version":/{s/^ *"version": *"\([^"]*\)".*/\1/p;q;}' $(srcdir)/META.json)
DIST_CONTROL_VERSION = $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" $(srcdir)/$(EXTENSION).control)
DIST_NAME = $(EXTENSION)-$(DIST_VERSION)

dist:
	@case "$(DIST_VERSION)" in \
		"$(DIST_CONTROL_VERSION)".*) ;; \
		*) echo "META.json version $(DIST_VERSION) does not match default_version $(DIST_CONTROL_VERSION) in $(EXTENSION).control" >&2; exit 1 ;; \
	esac
	@git -C $(srcdir) diff --quiet HEAD -- || echo "warning: uncommitted changes are not in the archive" >&2
	git -C $(srcdir) archive --format=zip --prefix=$(DIST_NAME)/ -o $(CURDIR)/$(DIST_NAME).zip HEAD
	@echo "made $(DIST_NAME).zip"

.PHONY: dist
