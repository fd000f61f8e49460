// SPEC §2.2: which text may be a client seed or a seat name, written out as data (as SPEC lists the refused code
// points) rather than asked of this browser's Unicode tables: the rule must not change with the Unicode version.

/**
 * The client seed and seat name rule, independent of any Unicode version: the data of
 * tests/vectors/client_seed_rule.json (a Node test checks that this copy equals that file).
 */
export const CLIENT_SEED_RULE = Object.freeze({
  client_seed_length: [1, 256],
  seat_name_length: [1, 40],
  generic_excluded: [[0, 31], [127, 159], [55296, 57343], [57344, 63743], [64976, 65007], [983040, 1114111]],
  noncharacter_low16: [65534, 65535],
  excluded_ranges: [
    [160, 160], [173, 173], [1536, 1541], [1564, 1564], [1757, 1757], [1807, 1807], [2192, 2193],
    [2274, 2274], [5760, 5760], [6158, 6158], [8192, 8207], [8232, 8239], [8287, 8292], [8294, 8303],
    [12288, 12288], [65279, 65279], [65529, 65531], [69821, 69821], [69837, 69837], [78896, 78904],
    [113824, 113827], [119155, 119162], [917505, 917505], [917536, 917631],
  ],
});
const EXCLUDED = [...CLIENT_SEED_RULE.generic_excluded, ...CLIENT_SEED_RULE.excluded_ranges];

function codePointAllowed(cp) {
  if (CLIENT_SEED_RULE.noncharacter_low16.includes(cp & 0xffff)) return false;
  return !EXCLUDED.some(([lo, hi]) => lo <= cp && cp <= hi);
}

/** Text of lo..hi code points, none of them excluded by the rule of SPEC §2.2. */
function textAllowed(text, [lo, hi]) {
  if (typeof text !== "string") return false;
  let n = 0;
  for (const ch of text) {
    n++;
    if (n > hi || !codePointAllowed(ch.codePointAt(0))) return false;
  }
  return n >= lo;
}

export const clientSeedValid = (text) => textAllowed(text, CLIENT_SEED_RULE.client_seed_length);
export const seatNameValid = (text) => textAllowed(text, CLIENT_SEED_RULE.seat_name_length);
