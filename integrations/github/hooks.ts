/** Channels of a repository have the client id `github:<owner>/<repo>`. */
import { defineHooks } from "../../src/sdk/index.ts"
import { registered, useContext } from "./state.ts"

export const CLIENT_ID_PREFIX = "github:"

export default defineHooks((cairn) => {
  useContext(cairn)
  cairn.registerMetadata({
    integration_type: "github",
    client_id_prefix: CLIENT_ID_PREFIX,
    user_attribution: (login) => ({ username: login, icon_url: `https://github.com/${encodeURIComponent(login)}.png` })
  })
  registered.metadata = true
})
