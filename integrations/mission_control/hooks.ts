import { defineHooks } from "../../src/sdk/index.ts"
import { useContext } from "./state.ts"

export default defineHooks((cairn) => {
  cairn.registerMetadata({ integration_type: "mission_control", client_id_prefix: "mission_control:" })
  useContext(cairn)
})
