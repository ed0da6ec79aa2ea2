import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { contentDisposition } from "../http/ContentDisposition.ts"
import { Backups } from "./Backups.ts"
import { NoSupervisor } from "./Errors.ts"
import { RestartAccepted } from "./Model.ts"
import { requestRestart } from "./Restart.ts"

export const OperationsHttpLive = HttpApiBuilder.group(CairnApi, "operations", (handlers) =>
  Effect.gen(function*() {
    const backups = yield* Backups
    const config = yield* AppConfig
    return handlers
      .handle("backup", () => backups.start("manual"))
      .handle("history", ({ urlParams }) => backups.history(urlParams.limit ?? 50))
      .handle("getBackup", ({ path }) => backups.get(path.id))
      .handleRaw("download", ({ path }) =>
        Effect.flatMap(backups.archive(path.id), ({ file, name }) =>
          HttpServerResponse.file(file, {
            contentType: "application/gzip",
            headers: { "content-disposition": contentDisposition("attachment", name) }
          }).pipe(
            Effect.orDie
          )))
      .handle("restart", () =>
        Effect.gen(function*() {
          const supervisor = config.supervisor
          if (supervisor === null) {
            return yield* new NoSupervisor({
              detail:
                "No process supervisor would start the server again (systemd, pm2, or SUPERVISED=true for another): restart it by hand"
            })
          }
          yield* Effect.logWarning(`Restart requested; shutting down for ${supervisor} to start the server again`)
          yield* requestRestart
          return new RestartAccepted({ restarting: true, supervisor })
        }))
  }))
