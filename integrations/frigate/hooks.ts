import { defineHooks } from "../../src/sdk/index.ts"
import { registered, useContext } from "./state.ts"

export default defineHooks((cairn) => {
  // Channels bind a camera as frigate:<camera>, or every camera as frigate:*.
  cairn.registerMetadata({ integration_type: "frigate", client_id_prefix: "frigate:" })
  registered.metadata = true
  useContext(cairn)
})
