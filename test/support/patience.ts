// Every ceiling in the tests (jest's per-test and hook timeouts, waitFor's deadline, a child process's start) is a
// safety net under a wait that ends as soon as its condition holds, never a timing assertion. Each is written as
// how long its work takes on a quiet 2-core machine, and `patient` stretches it: on a machine loaded by other
// work (load 7 on 2 cores, a CPU hog beside the suite) the same work takes several times as long, and a passing
// test never waits for its ceiling, so a generous one costs nothing but the time a real failure takes to report.
// jest.config.js stretches its testTimeout by the same factor.

/** How many times its quiet-machine duration the tests wait for any piece of work; TEST_SLACK overrides. */
export const SLACK = Number(process.env.TEST_SLACK) >= 1 ? Number(process.env.TEST_SLACK) : 4;

/** The ceiling for work that takes `quietMs` on a quiet machine. */
export const patient = (quietMs: number): number => Math.round(quietMs * SLACK);
