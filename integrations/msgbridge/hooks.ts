import { defineHooks } from "../../src/sdk/index.ts"
import { legacyClient } from "./legacy.ts"
import { registered, useContext } from "./state.ts"

export default defineHooks((cairn) => {
  cairn.registerMetadata({ integration_type: "msgbridge", client_id_prefix: "msgbridge:" })
  registered.metadata = true
  useContext(cairn)
  cairn.registerWorker(legacyClient)
})
