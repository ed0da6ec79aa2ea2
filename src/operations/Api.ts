/** `/api/v1/admin/operations`: backups (make, follow, list, download) and a graceful restart. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { detailBody } from "../contract/Errors.ts"
import { idPath } from "../contract/Params.ts"
import { BackupNotFound, BackupRunning, NoSupervisor } from "./Errors.ts"
import { Backup, BackupHistoryQuery, RestartAccepted } from "./Model.ts"

const backupPath = idPath("Backup")

export class OperationsApi extends HttpApiGroup.make("operations")
  .add(
    HttpApiEndpoint.post("backup", "/api/v1/admin/operations/backup")
      .addSuccess(Backup, { status: 202 })
      .addError(detailBody(BackupRunning))
      .annotate(RequiredScope, "operations:write")
      .annotate(
        OpenApi.Description,
        "Start a backup of the database (a consistent snapshot, PGlite or PostgreSQL) and the data directory (workspaces, generated secret) into one .tar.gz under BACKUP_DIR; answers at once with the running backup (409 while another runs). Follow it with GET …/backup/{id}; restore with `cairn restore <archive>`"
      )
  )
  .add(
    HttpApiEndpoint.get("history", "/api/v1/admin/operations/backup/history")
      .setUrlParams(BackupHistoryQuery)
      .addSuccess(Schema.Array(Backup))
      .annotate(RequiredScope, "operations:read")
      .annotate(
        OpenApi.Description,
        "Backups, newest first, with status (running, complete, failed, expired by BACKUP_RETENTION), progress, size and schema version; limit 1-500 (default 50)"
      )
  )
  .add(
    HttpApiEndpoint.get("getBackup", "/api/v1/admin/operations/backup/:id")
      .setPath(backupPath)
      .addSuccess(Backup)
      .annotate(RequiredScope, "operations:read")
      .annotate(OpenApi.Description, "One backup, with its progress while it runs")
  )
  .add(
    HttpApiEndpoint.get("download", "/api/v1/admin/operations/backup/:id/download")
      .setPath(backupPath)
      .addSuccess(HttpApiSchema.Uint8Array({ contentType: "application/gzip" }))
      // The archive holds every secret of the installation (the server secret, sealed keys): admin only.
      .annotate(RequiredScope, "admin")
      .annotate(
        OpenApi.Description,
        "The archive of a complete backup (admin only: it holds the server secret and every sealed key), from the process whose BACKUP_DIR holds it"
      )
  )
  .add(
    HttpApiEndpoint.post("restart", "/api/v1/admin/operations/restart")
      .addSuccess(RestartAccepted, { status: 202 })
      .addError(detailBody(NoSupervisor))
      .annotate(RequiredScope, "operations:write")
      .annotate(
        OpenApi.Description,
        "Restart gracefully: answers 202, then shuts down as on SIGTERM and exits with code 75 for its supervisor (systemd, pm2, or SUPERVISED=true) to start it again. Without a supervisor it answers 409 and does nothing: restart the process by hand"
      )
  )
  .addError(detailBody(BackupNotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Operations")
{}
