/**
 * Each endpoint declares the scope it needs once, as this annotation on its definition. The
 * authentication middleware, `/api/v1/discover` and the OpenAPI document all read it from there.
 */
import { Context } from "effect"
import type { ScopeRequirement } from "./Scopes.ts"

/** Typed with the declared scope names, so `.annotate(RequiredScope, "bots:raed")` does not compile. */
export class RequiredScope extends Context.Tag("cairn/RequiredScope")<RequiredScope, ScopeRequirement>() {}
