/** Channels of a repository have the client id `github:<owner>/<repo>`. */
import { defineHooks } from "../../src/sdk/index.ts"
import { registered, useContext } from "./state.ts"
import { decideDelivery } from "./webhook.ts"

export const CLIENT_ID_PREFIX = "github:"

export default defineHooks((cairn) => {
  useContext(cairn)
  cairn.registerMetadata({
    integration_type: "github",
    client_id_prefix: CLIENT_ID_PREFIX,
    user_attribution: (login) => ({ username: login, icon_url: `https://github.com/${encodeURIComponent(login)}.png` })
  })
  registered.metadata = true
  // A dead delivery a person retried is decided again at once.
  cairn.inbound.onRetry(async (entry) => void (await decideDelivery(cairn, entry)))
})
