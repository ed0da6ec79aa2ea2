/** A carapace: a named capability bundle of tools and skills that may include other carapaces. */
import { Schema } from "effect"
import { bodyOptions } from "../contract/Params.ts"

const Timestamp = Schema.Date.annotations({ jsonSchema: { type: "string", format: "date-time" } })

export const CarapaceId = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9][a-z0-9_.-]{0,63}$/, {
    message: () => "carapace ids are 1-64 characters: lowercase letters, digits, '.', '-' and '_'"
  })
)

const names = (what: string) =>
  Schema.Array(
    Schema.String.pipe(
      Schema.filter((value) => value.trim().length > 0 || `${what} must not be blank`),
      Schema.maxLength(200, { message: () => `${what} must be at most 200 characters` })
    )
  ).pipe(Schema.maxItems(200, { message: () => `at most 200 ${what}s` }))

const carapaceFields = {
  name: Schema.String.pipe(Schema.minLength(1, { message: () => "name must not be empty" })),
  description: Schema.optionalWith(Schema.String, { default: () => "" }),
  /** Tool names, as registered (core tools, integration tools). */
  tools: Schema.optionalWith(names("tool name"), { default: () => [] }),
  /** Skill ids (`concise-answers`, `integrations/<name>/<stem>`). */
  skills: Schema.optionalWith(names("skill id"), { default: () => [] }),
  /** Other carapaces whose tools and skills this one brings along. */
  includes: Schema.optionalWith(Schema.Array(CarapaceId), { default: () => [] })
}

/** What a YAML file or a create request holds. */
export const CarapaceConfig = Schema.Struct({ id: CarapaceId, ...carapaceFields })
export type CarapaceConfig = typeof CarapaceConfig.Type

export class Carapace extends Schema.Class<Carapace>("Carapace")({
  id: Schema.String,
  name: Schema.String,
  description: Schema.String,
  tools: Schema.Array(Schema.String),
  skills: Schema.Array(Schema.String),
  includes: Schema.Array(Schema.String),
  source: Schema.Literal("file", "api"),
  /** Who supplied it: `core` (carapaces/), `integration:<id>`, or `api`. */
  origin: Schema.String,
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

export class CarapaceList extends Schema.Class<CarapaceList>("CarapaceList")({ carapaces: Schema.Array(Carapace) }) {}

export class CreateCarapace extends Schema.Class<CreateCarapace>("CreateCarapace")(
  { id: CarapaceId, ...carapaceFields },
  bodyOptions
) {}

/** An update names only what changes. */
export class UpdateCarapace extends Schema.Class<UpdateCarapace>("UpdateCarapace")(
  {
    name: Schema.optionalWith(carapaceFields.name, { exact: true }),
    description: Schema.optionalWith(Schema.String, { exact: true }),
    tools: Schema.optionalWith(names("tool name"), { exact: true }),
    skills: Schema.optionalWith(names("skill id"), { exact: true }),
    includes: Schema.optionalWith(Schema.Array(CarapaceId), { exact: true })
  },
  [undefined, undefined, { parseOptions: { errors: "all", onExcessProperty: "error" } }]
) {}

/** Carapaces with their includes followed: every carapace reached, and the union of their tools and skills. */
export class ResolvedCarapaces extends Schema.Class<ResolvedCarapaces>("ResolvedCarapaces")({
  carapaces: Schema.Array(Schema.String),
  tools: Schema.Array(Schema.String),
  skills: Schema.Array(Schema.String),
  /** Ids named (directly or by an include) that no carapace has. */
  missing: Schema.Array(Schema.String)
}) {}

export class ChannelCarapaces extends Schema.Class<ChannelCarapaces>("ChannelCarapaces")({
  channel_id: Schema.UUID,
  carapaces: Schema.Array(Schema.String)
}) {}

export class SetChannelCarapaces extends Schema.Class<SetChannelCarapaces>("SetChannelCarapaces")(
  { carapaces: Schema.Array(CarapaceId).pipe(Schema.maxItems(100, { message: () => "at most 100 carapaces" })) },
  bodyOptions
) {}

/** An include cycle: `cycle` starts and ends with the same id. */
export class CarapaceCycle extends Schema.TaggedError<CarapaceCycle>()("CarapaceCycle", {
  cycle: Schema.Array(Schema.String)
}) {
  override get message() {
    return `Carapace include cycle: ${this.cycle.join(" -> ")}`
  }
}
