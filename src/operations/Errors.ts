/** What the operations domain can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class BackupNotFound extends Schema.TaggedError<BackupNotFound>()(
  "BackupNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No backup with that id, or its archive is no longer kept here" })
) {}

export class BackupRunning extends Schema.TaggedError<BackupRunning>()(
  "BackupRunning",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 409, description: "A backup is already running" })
) {}

export class NoSupervisor extends Schema.TaggedError<NoSupervisor>()(
  "NoSupervisor",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 409, description: "No process supervisor would start the server again" })
) {}
