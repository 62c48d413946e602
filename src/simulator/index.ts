// Public face of the Calendbook simulator: a faithful fake of the scheduling service's API and OAuth server.
export { startSimulator } from './server.js';
export { formatSimulatorBanner } from './banner.js';
export { FAULTABLE_ENDPOINTS, defaultFaultSettings } from './faults.js';
export { SimulatorControlError } from './types.js';
export { SimulatorStateError } from './state-format.js';
export { createPrng, derivePrng, type Prng } from './prng.js';
export type {
  CallArrival,
  CallCounts,
  DriftVariant,
  EventTypePatch,
  EventTypePayload,
  FaultOutcome,
  FaultSettings,
  FaultSettingsPatch,
  RawBodyGenerator,
  RawReply,
  IssuedCredential,
  RunningSimulator,
  SimLogger,
  SimUserDetails,
  SimUserSummary,
  SimulatorControl,
  SimulatorOptions,
  UserProfilePayload,
  Weekday,
  WeeklyHours,
  WorkingRange,
} from './types.js';
