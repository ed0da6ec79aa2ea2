import { StrictMode } from "react"
import { createRoot } from "react-dom/client"

const Widget = () => <main data-testid="widget">Chat</main>

createRoot(document.getElementById("root")!).render(<StrictMode><Widget /></StrictMode>)
