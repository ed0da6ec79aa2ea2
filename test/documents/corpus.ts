/**
 * A hand-made corpus for ranking tests: ten topics of three documents each, written in different
 * words, and ten queries that paraphrase a topic rather than quote it. The relevant documents of
 * a query are its topic's three.
 */

export interface CorpusDocument {
  readonly key: string
  readonly title: string
  readonly content: string
}

export const corpus: ReadonlyArray<CorpusDocument> = [
  // bread
  {
    key: "bread-1",
    title: "Feeding a sourdough starter",
    content:
      "Keep the starter at room temperature and feed it flour and water every day. A healthy culture of wild yeast doubles within six hours and smells pleasantly sour."
  },
  {
    key: "bread-2",
    title: "Shaping and proofing loaves",
    content:
      "After the bulk fermentation, shape the dough into a tight boule, let it proof in a floured basket overnight in the fridge, then bake it in a hot Dutch oven."
  },
  {
    key: "bread-3",
    title: "Why my bread did not rise",
    content:
      "A dense loaf usually means the yeast was weak or the dough was underproofed. Knead longer to build gluten and give the dough more time to ferment before baking."
  },
  // containers
  {
    key: "k8s-1",
    title: "Rolling out a new deployment",
    content:
      "Update the container image tag in the Kubernetes deployment manifest and apply it; the cluster replaces pods gradually so the service stays available."
  },
  {
    key: "k8s-2",
    title: "Debugging crashing pods",
    content:
      "When a pod is in CrashLoopBackOff, read its logs with kubectl logs, describe the pod to see events, and check memory limits on the container."
  },
  {
    key: "k8s-3",
    title: "Scaling services on the cluster",
    content:
      "A horizontal pod autoscaler adds replicas when processor usage rises; set resource requests on each container so the scheduler can place the pods on nodes."
  },
  // running
  {
    key: "run-1",
    title: "Training plan for a first marathon",
    content:
      "Build weekly mileage slowly over sixteen weeks, with one long run every weekend that grows to about thirty kilometres before the race."
  },
  {
    key: "run-2",
    title: "Easy runs and tempo runs",
    content:
      "Most runners should jog most of their miles at an easy conversational pace, with one faster tempo session a week to raise the lactate threshold."
  },
  {
    key: "run-3",
    title: "Avoiding injury while running",
    content:
      "Shin splints and knee pain come from increasing distance too fast. Rest days, good shoes and strength exercises for the hips keep runners healthy."
  },
  // taxes
  {
    key: "tax-1",
    title: "Filing your income tax return",
    content:
      "Gather your salary statements and receipts, declare all income for the year, and submit the return before the deadline to avoid a penalty."
  },
  {
    key: "tax-2",
    title: "Deductions for the self-employed",
    content: "Freelancers can deduct business expenses such as a home office, equipment and professional fees from their taxable income."
  },
  {
    key: "tax-3",
    title: "Getting a tax refund faster",
    content:
      "If you paid too much tax through withholding, the revenue office refunds the difference; filing electronically with direct deposit is quickest."
  },
  // plants
  {
    key: "plant-1",
    title: "Watering indoor plants",
    content: "Most houseplants want their soil to dry out a little between waterings; soggy soil rots the roots. Pots need drainage holes."
  },
  {
    key: "plant-2",
    title: "Light for houseplants",
    content: "Ferns tolerate shade, while cacti and succulents need several hours of bright sunlight on a windowsill facing south."
  },
  {
    key: "plant-3",
    title: "Yellow leaves on a potted plant",
    content:
      "Leaves turning yellow often point to overwatering or a lack of nutrients; repot the plant in fresh compost and fertilise it in spring."
  },
  // electric cars
  {
    key: "ev-1",
    title: "Charging an electric car at home",
    content:
      "A wall box charger on a dedicated circuit refills the battery of an electric vehicle overnight, much faster than a household socket."
  },
  {
    key: "ev-2",
    title: "Battery range in winter",
    content:
      "Cold weather reduces the range of an electric vehicle because the lithium battery is less efficient and the cabin heater draws power."
  },
  {
    key: "ev-3",
    title: "Fast charging on road trips",
    content:
      "Motorway rapid chargers bring an electric car battery from ten to eighty percent in about half an hour; plan stops along the route."
  },
  // coffee
  {
    key: "coffee-1",
    title: "Brewing pour-over coffee",
    content: "Grind the beans medium-fine, rinse the paper filter, and pour water just off the boil in slow circles over the grounds."
  },
  {
    key: "coffee-2",
    title: "Pulling an espresso shot",
    content:
      "An espresso machine forces hot water through finely ground coffee at nine bars of pressure; a good shot takes about twenty-five seconds."
  },
  {
    key: "coffee-3",
    title: "Storing coffee beans",
    content:
      "Roasted beans lose their aroma within weeks; keep them in an airtight container away from light and grind just before brewing."
  },
  // wifi
  {
    key: "wifi-1",
    title: "Weak wireless signal at home",
    content:
      "Place the router in a central spot away from thick walls, or add mesh access points so the wireless network reaches every room."
  },
  {
    key: "wifi-2",
    title: "Changing the router password",
    content:
      "Log in to the router's admin page, choose WPA3 security and set a long passphrase for the wireless network; the Quillfeather AX-3000 keeps it under Security."
  },
  {
    key: "wifi-3",
    title: "Slow internet connection",
    content:
      "Restart the modem and router, test the connection speed with a cable, and update the router firmware if downloads remain slow."
  },
  // sleep
  {
    key: "sleep-1",
    title: "Falling asleep more easily",
    content: "Go to bed at the same hour every night, keep the bedroom dark and cool, and avoid screens for an hour before sleep."
  },
  {
    key: "sleep-2",
    title: "Caffeine and insomnia",
    content:
      "Caffeine stays in the body for many hours, so an afternoon coffee can keep you awake at night; insomnia often improves without it."
  },
  {
    key: "sleep-3",
    title: "How much sleep adults need",
    content: "Most adults need seven to nine hours of sleep; too little rest harms memory, mood and the immune system."
  },
  // dogs
  {
    key: "dog-1",
    title: "House-training a puppy",
    content: "Take the puppy outside after meals and naps, praise it when it relieves itself outdoors, and never punish accidents indoors."
  },
  {
    key: "dog-2",
    title: "Teaching a dog to sit and stay",
    content: "Reward the dog with a treat the moment it sits; lengthen the stay gradually and keep training sessions short and cheerful."
  },
  {
    key: "dog-3",
    title: "Stopping a dog from pulling on the leash",
    content: "Stand still whenever the dog pulls on the lead and walk on only when it is loose; a harness can help with a strong dog."
  }
]

export interface CorpusQuery {
  readonly q: string
  readonly relevant: ReadonlyArray<string>
}

export const queries: ReadonlyArray<CorpusQuery> = [
  { q: "how do I bake a good loaf of bread with natural yeast", relevant: ["bread-1", "bread-2", "bread-3"] },
  { q: "kubernetes pods keep restarting and need more replicas", relevant: ["k8s-1", "k8s-2", "k8s-3"] },
  { q: "preparing to run a long distance race", relevant: ["run-1", "run-2", "run-3"] },
  { q: "paying less tax and declaring income", relevant: ["tax-1", "tax-2", "tax-3"] },
  { q: "caring for plants in pots indoors", relevant: ["plant-1", "plant-2", "plant-3"] },
  { q: "electric vehicle battery charging", relevant: ["ev-1", "ev-2", "ev-3"] },
  { q: "making espresso and coffee from fresh beans", relevant: ["coffee-1", "coffee-2", "coffee-3"] },
  { q: "my home wireless router network is unreliable", relevant: ["wifi-1", "wifi-2", "wifi-3"] },
  { q: "trouble sleeping at night", relevant: ["sleep-1", "sleep-2", "sleep-3"] },
  { q: "training my puppy to behave", relevant: ["dog-1", "dog-2", "dog-3"] }
]
