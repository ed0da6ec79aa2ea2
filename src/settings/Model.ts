/** The server settings that can change at runtime, each with its schema, source and default. */
import { Either, Schema } from "effect"
import type { AppConfigShape } from "../config/AppConfig.ts"
import { parseRate } from "../config/Rate.ts"

export interface SettingDefinition {
  readonly key: string
  readonly description: string
  /** Checks a candidate value; answers the normalised value or a message. */
  readonly validate: (value: unknown) => Either.Either<unknown, string>
  /** The value when nothing is stored: from the environment (already parsed) or the default. */
  readonly fromConfig: (config: AppConfigShape) => unknown
}

const boolean = (value: unknown): Either.Either<unknown, string> =>
  typeof value === "boolean" ? Either.right(value) : Either.left("Expected a boolean")

const rate = (value: unknown): Either.Either<unknown, string> =>
  typeof value === "string"
    ? Either.map(parseRate(value), (parsed) => parsed.text)
    : Either.left('Expected a rate like "100/minute"')

export const settingDefinitions: ReadonlyArray<SettingDefinition> = [
  {
    key: "RATE_LIMIT_ENABLED",
    description: "Whether inbound API calls are rate-limited",
    validate: boolean,
    fromConfig: (config) => config.rateLimitEnabled
  },
  {
    key: "RATE_LIMIT_DEFAULT",
    description: "Limit on every API route per key (or client IP), as <n>/minute",
    validate: rate,
    fromConfig: (config) => config.rateLimitDefault.text
  },
  {
    key: "RATE_LIMIT_CHAT",
    description: "Additional, stricter limit on /chat and /chat/stream",
    validate: rate,
    fromConfig: (config) => config.rateLimitChat.text
  },
  {
    key: "SYSTEM_PAUSED",
    description: "When true, new agent runs are queued with reason system_paused",
    validate: boolean,
    fromConfig: () => false
  }
]

export const definitionsByKey: ReadonlyMap<string, SettingDefinition> = new Map(
  settingDefinitions.map((definition) => [definition.key, definition])
)

export const SettingSource = Schema.Literal("stored", "environment")

export class SettingView extends Schema.Class<SettingView>("SettingView")({
  key: Schema.String,
  value: Schema.Unknown,
  source: SettingSource,
  description: Schema.String
}) {}

export class SettingsList extends Schema.Class<SettingsList>("SettingsList")({
  settings: Schema.Array(SettingView)
}) {}
