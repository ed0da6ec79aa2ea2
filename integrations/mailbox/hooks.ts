import { defineHooks } from "../../src/sdk/index.ts"
import { pollOnce } from "./poller.ts"
import { useContext } from "./state.ts"

export default defineHooks((cairn) => {
  cairn.registerMetadata({ integration_type: "mailbox", client_id_prefix: "mailbox:" })
  // The tools run without a context of their own: they reach the integration's through this.
  useContext(cairn)
  // A dead mail a person retried is read again by its UID in a poll cycle started now, not at the next.
  cairn.inbound.onRetry(async () => void (await pollOnce(cairn, await cairn.settings.all())))
})
