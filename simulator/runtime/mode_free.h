// The first header of a unit of the runtime's mode-free sources (simulator/runtime_build.py): the
// sources that do not say "compiled per mode" are compiled once for every build whose runtime
// flags differ only in the mode's macro (SIM_MEMCHECK, ...), and linked into each of those builds'
// runtimes. Their text must not depend on the mode, so here the mode's macros, and those the
// headers define from them, are poisoned: a test of one that such a source reaches stops its
// compile (mark the source "compiled per mode"); the headers leave their parts that depend on the
// mode out of these units (SIM_MODE_FREE), and the per-mode sources define what those parts declare.
#ifndef SIM_MODE_FREE_H
#define SIM_MODE_FREE_H

#define SIM_MODE_FREE 1
#pragma GCC poison SIM_MEMCHECK SIM_RACECHECK SIM_SYNCCHECK SIM_SHARED_RACES
#pragma GCC poison SIM_LOOP_FAULTS SIM_LOOPS_AS_FIBERS SIM_UNJUDGED_INLINE SIM_THREAD_LOOP
#pragma GCC poison SIM_HOIST_CHECKS SIM_UNCHECKED

#endif  // SIM_MODE_FREE_H
