/*
 * git.h - the git layer: the repositories packetfs works in, and what the
 * layers above may use of it.
 *
 * It knows nothing of items, stages or the store: it is given repository
 * paths, branch names and commits, and answers in git's terms. It may use
 * exec.h (the git program it runs for bundles) and the layers below, and
 * nothing above. Each header states its own contract and threads.
 *
 *   repo.h - git through libgit2: branches, worktrees, heads, diffs,
 *            bundles (repo_bundle.c)
 *   repo_changes.h - the paths a change touched, renames paired
 *   repo_side.h - a measured recipe's base commit and clean checkouts
 *   push.h - a publish's `git push`: its environment and its errors
 *   refs_watch.h - a count that moves whenever a repository's refs may have
 *            changed, read without looking a ref up
 */
#ifndef PACKETFS_GIT_H
#define PACKETFS_GIT_H

#include "push.h"
#include "refs_watch.h"
#include "repo.h"
#include "repo_changes.h"
#include "repo_side.h"

#endif
