// A line per finished test file, with how many of how many and the time so far, and a line a minute naming the
// files still running: the whole suite takes many minutes (README, "The tests"), more on a loaded machine, and
// jest's own reporter says nothing between two files. In a terminal jest's status line already shows this, so
// the lines are printed only when stderr is not one (CI, a log file, `| tee`). Plain JS: jest loads reporters
// without transforming them.
const HEARTBEAT_MS = 60_000;

const clockTime = (ms) => {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
};

export default class ProgressReporter {
  #total = 0;
  #done = 0;
  #failed = 0;
  #startedAt = Date.now();
  #running = new Map();
  #heartbeat;
  #enabled;

  constructor(globalConfig, options = {}) {
    this.#enabled = options.always === true || !process.stderr.isTTY;
  }

  #line(text) {
    if (this.#enabled)
      process.stderr.write(`[progress ${clockTime(Date.now() - this.#startedAt)}] ${text}\n`);
  }

  #relative(path) {
    const cwd = `${process.cwd()}/`;
    return path.startsWith(cwd) ? path.slice(cwd.length) : path;
  }

  onRunStart(results) {
    this.#total = results.numTotalTestSuites;
    this.#startedAt = Date.now();
    this.#line(`${this.#total} test files to run`);
    this.#heartbeat = setInterval(() => {
      if (this.#running.size === 0) return;
      const now = Date.now();
      const files = [...this.#running].map(
        ([path, at]) => `${this.#relative(path)} (${clockTime(now - at)})`,
      );
      this.#line(`${this.#done} of ${this.#total} done; still running: ${files.join(', ')}`);
    }, HEARTBEAT_MS);
    this.#heartbeat.unref();
  }

  onTestFileStart(test) {
    this.#running.set(test.path, Date.now());
  }

  onTestFileResult(test, result) {
    const startedAt = this.#running.get(test.path) ?? Date.now();
    this.#running.delete(test.path);
    this.#done += 1;
    const failed = result.numFailingTests > 0 || result.testExecError !== undefined;
    if (failed) this.#failed += 1;
    this.#line(
      `${this.#done}/${this.#total} ${failed ? 'FAIL' : 'pass'} ${this.#relative(test.path)} ` +
        `(${clockTime(Date.now() - startedAt)})${this.#failed > 0 ? `; ${this.#failed} failed so far` : ''}`,
    );
  }

  onRunComplete() {
    clearInterval(this.#heartbeat);
    this.#line(`${this.#done} of ${this.#total} files done, ${this.#failed} failed`);
  }

  getLastError() {
    return undefined;
  }
}
