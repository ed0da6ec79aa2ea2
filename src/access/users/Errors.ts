/** What users and sign-in can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class UserNotFound extends Schema.TaggedError<UserNotFound>()(
  "UserNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No user with that id, or OpenID sign-in is not configured" })
) {}

export class UserConflict extends Schema.TaggedError<UserConflict>()(
  "UserConflict",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 409, description: "Setup is complete already, or the username is taken" })
) {}

export class IdentityProviderFailed extends Schema.TaggedError<IdentityProviderFailed>()(
  "IdentityProviderFailed",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 502, description: "The OpenID provider failed" })
) {}

export class InvitationNotFound extends Schema.TaggedError<InvitationNotFound>()(
  "InvitationNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No invitation or reset link with that id" })
) {}

export class InvitationSpent extends Schema.TaggedError<InvitationSpent>()(
  "InvitationSpent",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 410, description: "The link was used, expired or was withdrawn" })
) {}
