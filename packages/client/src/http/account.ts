import { z } from "zod";
import { addressSchema, components, isoTimeSchema } from "./common.js";

/** GET /v1/account: the key's wallet and its credits. */
export const accountSchema = z
  .object({
    wallet: addressSchema,
    credits_remaining: z.number().int().min(0),
    usdg_value: z.number().min(0),
    last_topup_at: isoTimeSchema.nullable(),
    api_key_created_at: isoTimeSchema.nullable(),
  })
  .register(components, { id: "Account" });
export type Account = z.infer<typeof accountSchema>;
