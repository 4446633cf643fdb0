import { z } from "zod";
import { environmentTypes } from "../../../shared/deployments/environments.ts";

/**
 * A method's config as received: validated field by field against the deployer's schema
 * in the handler (secrets may be omitted on update), `null` removes it.
 */
const configInput = z.record(z.string(), z.unknown()).nullable().optional();

const name = z.string().trim().min(1).max(255);

export const createEnvironmentBody = z.object({
  name,
  type: z.enum(environmentTypes),
  /** The project's first environment is its default unless this says otherwise. */
  is_default: z.boolean().optional(),
  ftp_config: configInput,
  ssh_config: configInput,
  git_config: configInput,
});

export const updateEnvironmentBody = z.object({
  name: name.optional(),
  type: z.enum(environmentTypes).optional(),
  is_default: z.boolean().optional(),
  ftp_config: configInput,
  ssh_config: configInput,
  git_config: configInput,
});

export type EnvironmentInput = z.infer<typeof updateEnvironmentBody>;
