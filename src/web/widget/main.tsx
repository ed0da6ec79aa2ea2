import { StrictMode } from "react"
import { createRoot } from "react-dom/client"
import { Widget } from "./Widget.tsx"
import "./widget.css"

/** `/widget/<bot>`: the bot is the path's second segment. */
const bot = decodeURIComponent(window.location.pathname.split("/")[2] ?? "")

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <Widget bot={bot} />
  </StrictMode>
)
