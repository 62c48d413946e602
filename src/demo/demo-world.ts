// The simulated world the demo starts: how many Calendbook users, from which seed, and how many of them it
// connects. Shared with the test that runs this world on every day of a year (test/demo/demo-world.test.ts).
export const DEMO_WORLD = {
  /** Simulated users: a few more than are connected, so the admin page and the simulator show the difference. */
  users: 5,
  seed: 1,
  /** The first `accounts` users are the ones the demo connects (and the simulator's sign-in marks). */
  accounts: 3,
} as const;
