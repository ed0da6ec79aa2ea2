/** The Frigate integration: camera detections from Frigate NVR's MQTT events become agent tasks. */
export const id = "frigate"
export const name = "Frigate"
export const version = "1.0.0"
