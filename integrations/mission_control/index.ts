/** Mission control: a dashboard of what the server is doing, todos, and a workspace file proxy for external processes. */
export const id = "mission_control"
export const name = "Mission control"
export const version = "1.0.0"
