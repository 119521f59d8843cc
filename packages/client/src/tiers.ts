/** The API's tier names, in the order of the Solidity `Tier` enum. */
export const TIERS = ["lite", "standard", "pro", "max"] as const;
export type TierName = (typeof TIERS)[number];

/** The API name of a `Tier` enum value. */
export function tierName(index: number): TierName {
  const name = TIERS[index];
  if (name === undefined) throw new RangeError(`unknown tier index ${index}`);
  return name;
}

/** The `Tier` enum value of an API tier name. */
export function tierIndex(name: TierName): number {
  return TIERS.indexOf(name);
}

export function isTierName(value: string): value is TierName {
  return (TIERS as readonly string[]).includes(value);
}
