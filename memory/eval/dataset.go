package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// A relation is a kind of fact: how it is stated when saved, and how a user would
// ask for it later in other words. The questions deliberately avoid the fact's own
// wording (apart from names), which is what separates the retrievers: BM25 finds
// the person, a sentence embedding finds the meaning.
type relation struct {
	name      string
	fact      string   // template with {P} (person) and {X}, {Y} (values)
	questions []string // paraphrases with the same placeholders
	xs, ys    []string // value pools
}

var relations = []relation{
	{"editor", "{P}'s favourite text editor is {X}.",
		[]string{"Which program does {P} like best for writing code?", "What software does {P} prefer for editing source files?"},
		words("Vim Emacs Nano Helix Kakoune Micro Sublime Atom"), nil},
	{"home", "{P} lives in {X}.",
		[]string{"Which city is {P}'s home?", "Where does {P} reside?"},
		words("Lisbon Oslo Krakow Tallinn Porto Bergen Ghent Utrecht Aarhus Turin Graz Brno"), nil},
	{"allergy", "{P} is allergic to {X}.",
		[]string{"What food must {P} avoid eating?", "Which ingredient makes {P} sick?"},
		words("peanuts shellfish gluten sesame eggs soy strawberries mustard celery lupin"), nil},
	{"birthday", "{P} was born in {X}.",
		[]string{"When does {P} celebrate a birthday?", "In which month did {P} come into the world?"},
		words("January February March April May June July August September October November December"), nil},
	{"pet", "{P} has a {X} named {Y}.",
		[]string{"What kind of animal does {P} keep at home?", "Tell me about the companion animal {P} owns."},
		words("cat dog parrot tortoise rabbit hamster ferret goldfish"), words("Miso Biscuit Pepper Juno Olive Mochi Ziggy Nori Pickle Tofu")},
	{"language", "{P} speaks {X} fluently.",
		[]string{"Which foreign tongue has {P} mastered?", "What language can {P} converse in with ease?"},
		words("Portuguese Norwegian Polish Estonian Japanese Swahili Greek Finnish Hungarian Korean"), nil},
	{"car", "{P} drives a {X} {Y}.",
		[]string{"What vehicle does {P} use to commute?", "Which automobile belongs to {P}?"},
		words("red blue green silver black white"), words("hatchback van pickup sedan convertible minivan")},
	{"hobby", "On weekends {P} enjoys {X}.",
		[]string{"What does {P} do for fun in spare time?", "Which pastime keeps {P} busy on Saturdays and Sundays?"},
		words("climbing knitting sailing pottery birdwatching chess gardening baking cycling fishing"), nil},
	{"employer", "{P} works as a {X} at {Y}.",
		[]string{"What is {P}'s job?", "Which company employs {P} and in what role?"},
		words("nurse carpenter pilot accountant chemist librarian plumber architect"), words("Acme Globex Initech Umbrella Hooli Vandelay Soylent Cyberdyne")},
	{"drink", "Every morning {P} drinks {X}.",
		[]string{"What beverage does {P} have at breakfast?", "How does {P} start the day, drink-wise?"},
		words("espresso matcha kombucha cocoa chai lemonade kefir"), nil},
}

var firstNames = words(`Amara Bruno Chiara Dmitri Elif Farah Goran Hana Idris Jonas Keiko Lorenzo Maren
Nadia Oskar Priya Quentin Rosa Soren Tamsin Ugo Vesna Wiktor Ximena Yusuf Zofia Anders Beatriz Cyrus Delphine`)

var lastNames = words("Abbott Brandt Castro Dufresne Eriksen Fujita Garnier Holm Ivanova Jansen Kowalski Lindqvist")

func words(s string) []string { return strings.Fields(s) }

// fact is one record of the data set; query is one labelled question.
type fact struct {
	ID   string `json:"id"`
	Area string `json:"area"`
	Text string `json:"text"`
}

type query struct {
	Text string `json:"query"`
	Want string `json:"want"` // id of the fact that answers it
}

// dataset builds people facts for nPeople people (every relation for each) and
// one question per fact, all from a fixed seed, plus generic distractor notes that
// share vocabulary with the questions but answer none.
func dataset(nPeople int, seed uint64) ([]fact, []query) {
	rng := rand.New(rand.NewPCG(seed, 11))
	var facts []fact
	var queries []query
	for p := 0; p < nPeople; p++ {
		person := firstNames[p%len(firstNames)] + " " + lastNames[(p/len(firstNames))%len(lastNames)]
		if p >= len(firstNames)*len(lastNames) {
			person += fmt.Sprintf(" %d", p)
		}
		for _, rel := range relations {
			fill := func(t string) string {
				t = strings.ReplaceAll(t, "{P}", person)
				if rel.xs != nil {
					t = strings.ReplaceAll(t, "{X}", rel.xs[rng.IntN(len(rel.xs))])
				}
				if rel.ys != nil {
					t = strings.ReplaceAll(t, "{Y}", rel.ys[rng.IntN(len(rel.ys))])
				}
				return t
			}
			id := fmt.Sprintf("p%03d-%s", p, rel.name)
			facts = append(facts, fact{ID: id, Area: "main", Text: fill(rel.fact)})
			q := rel.questions[rng.IntN(len(rel.questions))]
			queries = append(queries, query{Text: strings.ReplaceAll(q, "{P}", person), Want: id})
		}
	}
	distractors := []string{
		"Code review happens before any program is merged into the main branch.",
		"The office kitchen is cleaned every evening; please avoid leaving food overnight.",
		"Company cars must be returned with a full tank.",
		"The team celebrates every birthday with cake in the break room.",
		"Pets are not allowed in the office except on the last Friday of the month.",
		"New employees receive a laptop and a guide to the company's software on day one.",
		"The city council publishes the list of public holidays each January.",
		"Weekend on-call duty rotates between the senior engineers.",
		"Language classes are offered to staff who relocate to another country.",
		"Breakfast is served in the canteen from seven until nine.",
	}
	for i := 0; i < 20*len(distractors); i++ {
		facts = append(facts, fact{ID: fmt.Sprintf("d%03d", i), Area: "main",
			Text: distractors[i%len(distractors)] + fmt.Sprintf(" (policy note %d)", i)})
	}
	return facts, queries
}
