// A demo whose parent died (npm or a supervisor killed with SIGKILL, a script's shell gone) is orphaned: nothing
// that started it can stop it any more, and it would hold its port and data folder for good. It stops itself
// instead, as on SIGHUP. Linux gives an orphan a new parent (init or a subreaper), which is how it is noticed.
const CHECK_EVERY_MS = 500;

/** Resolves once this process's parent is no longer the one it started with. */
export function untilParentGone(): Promise<'parent gone'> {
  const parent = process.ppid;
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      if (process.ppid === parent) return;
      clearInterval(timer);
      resolve('parent gone');
    }, CHECK_EVERY_MS);
    // Waiting for it must not keep the process alive once the demo has stopped by itself.
    timer.unref();
  });
}
