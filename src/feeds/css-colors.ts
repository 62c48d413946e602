// RFC 7986 COLOR takes a CSS3 colour name, not a hex value, and clients that honour it (Thunderbird, Apple
// Calendar) ignore anything else. Event types carry '#rrggbb', so a colour is mapped to the nearest named one
// by perceptual distance (CIE76 ΔE in CIELAB; plain RGB distance picks visibly wrong hues). Beyond
// MAX_FAITHFUL_DELTA_E no name is a faithful stand-in and COLOR is left out rather than shown wrong.
import { colorsNamed, differenceCie76, lab65, nearest, type Lab65 } from 'culori';

/** ΔE76 ≈ 2 is just noticeable; past ~25 two colours read as different colours, not shades of one. */
export const MAX_FAITHFUL_DELTA_E = 25;

// culori's names are CSS Color 4's: the 147 CSS3 extended colour keywords plus 'rebeccapurple', which RFC 7986
// COLOR (CSS3) does not allow. Synonyms (aqua/cyan, gray/grey, …) are both present; sorted, so that the
// alphabetically first wins a tie (nearest's sort is stable).
const CSS3_NAMES: ReadonlySet<string> = new Set(
  Object.keys(colorsNamed)
    .filter((name) => name !== 'rebeccapurple')
    .sort(),
);

const NAMED_LABS: { name: string; lab: Lab65 }[] = [...CSS3_NAMES].flatMap((name) => {
  const lab = lab65(name);
  return lab ? [{ name, lab }] : [];
});

const deltaE76 = differenceCie76();
const nearestNamed = nearest(NAMED_LABS, deltaE76, (named) => named.lab);

// Only '#rgb' and '#rrggbb': culori's parser also takes rgb(), hsl(), alpha and CSS4 names, none of which an
// event type's colour is meant to be.
const HEX_COLOR = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/;

/**
 * The CSS3 colour name for an event type's colour: a name is kept (lower-cased), '#rgb' or '#rrggbb' maps to
 * the nearest name; undefined when the value is neither or no name is close enough.
 */
export function cssColorNameFor(color: string | null): string | undefined {
  if (!color) return undefined;
  const trimmed = color.trim().toLowerCase();
  if (CSS3_NAMES.has(trimmed)) return trimmed;
  if (!HEX_COLOR.test(trimmed)) return undefined;
  const lab = lab65(trimmed);
  if (!lab) return undefined;
  const [best] = nearestNamed(lab);
  return best && deltaE76(lab, best.lab) <= MAX_FAITHFUL_DELTA_E ? best.name : undefined;
}
