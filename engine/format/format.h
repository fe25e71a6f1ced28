/*
 * format.h - the formats' layer: the parsers and writers of the texts
 * packetfs reads and writes, and what the layers above may use of them,
 * one header per format.
 *
 * A format is pure: it is given bytes and strings and answers with
 * structures, verdicts and texts. It opens no file it is not named, runs
 * no process, touches no store, item or loop, and may use util.h and
 * nothing above it; these are the fuzz targets (tests/fuzz/). Each header
 * states its own contract; every function may be called from any thread
 * on objects that thread owns.
 *
 *   config.h    - pipeline.json: parsing and validating the configuration
 *   ctlline.h   - the syntax of ctl's command lines
 *   recipe.h    - the recipe catalog and the plan's recipe list
 *   measure.h   - measured recipes: header lines, metrics, statistics
 *   registry.h  - registry.jsonl lines, the verdict, evidence.md's text
 *   testcount.h - how many tests a run ran: a runner's summary, JUnit XML
 *   cenv.h      - compute-env.md: the machines and the probes' answers
 *   scope.h     - plan.md's scope block, its keep globs, scope.md's text
 *   runenv.h    - the environment a recipe run ran in (its log header);
 *                 the probe of this machine (runenv_local.c) is exec's
 */
#ifndef PACKETFS_FORMAT_H
#define PACKETFS_FORMAT_H

#include "cenv.h"
#include "config.h"
#include "ctlline.h"
#include "measure.h"
#include "recipe.h"
#include "registry.h"
#include "runenv.h"
#include "scope.h"
#include "testcount.h"

#endif
