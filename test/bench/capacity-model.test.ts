// The capacity model's arithmetic (docs/scaling.md): rates × unit costs, and "not measured" kept, never guessed.
import { describe, expect, it } from '@jest/globals';
import {
  capacityAt,
  FEED_POLLS_PER_CONNECTION_DAY,
  perSyncAndCall,
  type UnitCosts,
} from './capacity-model.js';
import { formatFigure, unitCostsOf } from './capacity-table.js';

/** No bench has run: every unit cost null. */
const unmeasured: UnitCosts = unitCostsOf([]);

describe('capacity model', () => {
  it('multiplies a connection-hour rate and per-sync and per-call costs out to cores', () => {
    const costs: UnitCosts = {
      ...unmeasured,
      syncsPerConnectionHour: 36,
      callsPerConnectionHour: 360,
      workerCpuMsPerSyncFixed: 5,
      workerCpuMsPerCall: 0.5,
      workerCpuMsPerPush: 0,
      workerCpuMsPerDelivery: 0,
    };
    const at = capacityAt(costs, 10_000);
    expect(at.syncs).toBeCloseTo(100);
    expect(at.upstreamCalls).toBeCloseTo(1000);
    // 100 syncs × 5 ms + 1,000 calls × 0.5 ms = 1 s of CPU a second.
    expect(at.workerCores).toBeCloseTo(1);
    expect(at.feedPolls200).toBeCloseTo((10_000 * FEED_POLLS_PER_CONNECTION_DAY) / 86_400);
  });

  it('prints a resource whose unit cost was not measured as "not measured"', () => {
    const at = capacityAt({ ...unmeasured, syncsPerConnectionHour: 36 }, 10_000);
    expect(at.redisCores).toBeNull();
    expect(formatFigure(at.redisCores ?? null)).toBe('not measured');
  });

  it("takes the scheduler's CPU per sync from the tick bench's biggest tick at its largest size when kept", () => {
    const unitCosts = {
      bench: 'unit-costs',
      benchmark: 'unit costs',
      inputs: {},
      figures: { schedulerCpuMsPerSync: 2.8 },
    };
    const tick = {
      bench: 'tick',
      benchmark: 'tick',
      inputs: {},
      figures: {
        nodeCpuMs_100000kept2000due: 190,
        nodeCpuMs_1000000kept2000due: 134,
        nodeCpuMs_1000000kept50001due: 3311,
        tickMsAt1M: 189,
      },
    };
    expect(unitCostsOf([unitCosts]).schedulerCpuMsPerSync).toBe(2.8);
    expect(unitCostsOf([unitCosts, tick]).schedulerCpuMsPerSync).toBeCloseTo(3311 / 50001);
  });

  it('recovers a fixed cost per sync and a cost per call from two mixes of syncs', () => {
    const cost = (m: { syncs: number; calls: number }) => m.syncs * 7 + m.calls * 0.25;
    const first = { syncs: 60, calls: 5400 };
    const scheduled = { syncs: 300, calls: 600 };
    const split = perSyncAndCall(first, scheduled, cost);
    expect(split.perSync).toBeCloseTo(7);
    expect(split.perCall).toBeCloseTo(0.25);
  });
});
