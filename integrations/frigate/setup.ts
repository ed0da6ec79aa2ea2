import { Schema } from "effect"
import { defineSetup, SettingType } from "../../src/sdk/index.ts"

/** An MQTT broker's address: mqtt://, mqtts://, ws:// or wss://. */
const MqttUrl = Schema.Trim.pipe(
  Schema.filter((text) => URL.canParse(text) && /^(mqtts?|wss?):$/.test(new URL(text).protocol), {
    message: () => "Expected an mqtt://, mqtts://, ws:// or wss:// address"
  })
)

/** A detection score, 0 to 1. */
const Score = Schema.compose(Schema.Trim, Schema.NumberFromString).pipe(
  Schema.between(0, 1, { message: () => "Expected a number from 0 to 1" })
)

export const SETUP = defineSetup({
  env_vars: [
    {
      key: "FRIGATE_MQTT_URL",
      label: "MQTT broker URL",
      group: "Connection",
      required: true,
      schema: MqttUrl,
      description: "The MQTT broker Frigate publishes to, e.g. mqtt://127.0.0.1:1883"
    },
    {
      key: "FRIGATE_MQTT_USERNAME",
      label: "MQTT user name",
      group: "Connection",
      schema: SettingType.text,
      description: "The broker's user name, when it asks for one"
    },
    {
      key: "FRIGATE_MQTT_PASSWORD",
      label: "MQTT password",
      type: "secret",
      group: "Connection",
      secret: true,
      description: "The broker's password"
    },
    {
      key: "FRIGATE_MQTT_TOPIC",
      label: "MQTT topic",
      group: "Connection",
      advanced: true,
      default: "frigate/events",
      schema: SettingType.text,
      description: "Frigate's event topic (<topic_prefix>/events)"
    },
    {
      key: "FRIGATE_MQTT_CLIENT_ID",
      label: "MQTT client id",
      group: "Connection",
      advanced: true,
      default: "cairn-frigate",
      schema: SettingType.text,
      description: "The MQTT client id: stable, so the broker keeps the session (and the events) while Cairn is down"
    },
    {
      key: "FRIGATE_URL",
      label: "Frigate URL",
      type: "url",
      group: "Connection",
      schema: SettingType.url,
      description: "Frigate's HTTP address (e.g. http://frigate.lan:5000), for snapshots and the status check"
    },
    {
      key: "FRIGATE_CAMERAS",
      label: "Cameras",
      type: "list",
      group: "Detections",
      schema: SettingType.list,
      description: "Cameras to watch, comma-separated; empty: every camera"
    },
    {
      key: "FRIGATE_LABELS",
      label: "Labels",
      type: "list",
      group: "Detections",
      default: "person",
      schema: SettingType.list,
      description: "Labels that wake the bot, comma-separated; empty: every label"
    },
    {
      key: "FRIGATE_MIN_SCORE",
      label: "Lowest score",
      type: "number",
      group: "Detections",
      default: "0.7",
      schema: Score,
      description: "The lowest score (top_score, else score) that wakes the bot"
    },
    {
      key: "FRIGATE_ZONES",
      label: "Zones",
      type: "list",
      group: "Detections",
      advanced: true,
      schema: SettingType.list,
      description: "Zones, comma-separated: a detection must have entered one; empty: anywhere"
    },
    {
      key: "FRIGATE_COOLDOWN_SECONDS",
      label: "Cooldown (seconds)",
      type: "number",
      group: "Detections",
      advanced: true,
      default: "120",
      schema: SettingType.integer({ min: 0, max: 86_400 }),
      description: "After a task for a camera, its further detections are skipped this long (per channel); 0: none"
    },
    {
      key: "FRIGATE_TRIGGER",
      label: "Wake the bot",
      type: "enum",
      choices: ["new", "end"],
      group: "Detections",
      default: "new",
      schema: SettingType.choice("new", "end"),
      description: "new: a detection wakes the bot as soon as it passes the filters; end: when the tracked object is gone"
    },
    {
      key: "FRIGATE_MODEL",
      label: "Model",
      group: "Detections",
      advanced: true,
      schema: SettingType.text,
      description: "The model for detection tasks; default: the bot's"
    },
    {
      key: "FRIGATE_SNAPSHOT_TIMEOUT_MS",
      label: "Snapshot timeout (ms)",
      type: "number",
      group: "Connection",
      advanced: true,
      default: "10000",
      schema: SettingType.integer({ min: 100, max: 120_000 }),
      description: "How long a snapshot fetch may take"
    }
  ],
  sidebar_section: {
    id: "frigate",
    title: "Frigate",
    icon: "Camera",
    items: [
      { label: "Status", href: "/integrations/frigate/status", icon: "Activity" },
      { label: "Diagnose", href: "/integrations/frigate/diagnose", icon: "Stethoscope" }
    ]
  }
})
