#!/usr/bin/env python
from market_desk.crew import MarketDeskCrew


def run():
    inputs = {
        'company': 'ACME Kettles',
    }
    MarketDeskCrew().crew().kickoff(inputs=inputs)
