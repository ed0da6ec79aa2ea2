/**
 * How a call held for approval is told to where its run came from (the bridge chat, a Slack
 * thread), beside the approval inbox. Dispatchers live above the agent, which cannot import them:
 * the delivery layer installs the outlet once at startup (tasks/ApprovalNotice.ts). Until one is
 * installed, nothing is told; the approval still waits in the inbox.
 */
import { Effect } from "effect"
import type { ApprovalReason } from "./Events.ts"
import type { ExternalOrigin } from "./Provenance.ts"
import type { TurnInput } from "./Turn.ts"

/** A call held for approval, as the run's origin is told of it. */
export interface ApprovalNotice {
  readonly approvalId: string
  readonly tool: string
  readonly args: Record<string, unknown>
  readonly reason: ApprovalReason
  readonly origins: ReadonlyArray<ExternalOrigin>
  /** How long it waits before it is denied; 0: denied at once. */
  readonly timeoutSeconds: number
}

export type ApprovalOutlet = (turn: TurnInput, notice: ApprovalNotice) => Effect.Effect<void>

export class ApprovalOutlets extends Effect.Service<ApprovalOutlets>()("cairn/ApprovalOutlets", {
  sync: () => {
    let installed: ApprovalOutlet | undefined
    return {
      install: (outlet: ApprovalOutlet) => Effect.sync(() => void (installed = outlet)),
      /** Tells the run's origin; a failure is logged, never the run's. */
      announce: (turn: TurnInput, notice: ApprovalNotice): Effect.Effect<void> =>
        installed
          ? installed(turn, notice).pipe(
            Effect.catchAllCause((cause) => Effect.logWarning(`The approval ${notice.approvalId} could not be announced`, cause))
          )
          : Effect.void
    }
  }
}) {}
