import { StrictMode } from "react"
import { createRoot } from "react-dom/client"
import { applyTheme, readOptions } from "./options.ts"
import { Widget } from "./Widget.tsx"
import "./widget.css"

/** `/widget/<bot>`: the bot is the path's second segment. */
const bot = decodeURIComponent(window.location.pathname.split("/")[2] ?? "")
const options = readOptions()
applyTheme(options)

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <Widget bot={bot} options={options} />
  </StrictMode>
)
