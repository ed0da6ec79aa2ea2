import { defineHooks } from "../../src/sdk/index.ts"
import { useContext } from "./state.ts"

export default defineHooks((cairn) => {
  cairn.registerMetadata({ integration_type: "mailbox", client_id_prefix: "mailbox:" })
  // The tools run without a context of their own: they reach the integration's through this.
  useContext(cairn)
})
